//! The tokio runtime of `pqkit.bus`, owned by this module, and the bridge from its futures to asyncio.
//!
//! Why not a runtime kept in a static for the life of the process: its threads would outlive the interpreter.
//! A future that completes while Python exits hands its result over from a runtime thread, which takes the
//! GIL; once the interpreter finalizes, CPython ends such a thread inside `PyGILState_Ensure` (or aborts on
//! its `PyGILState_Release`), killing the process with SIGSEGV or SIGABRT after a program that did nothing
//! wrong. So the runtime is stopped at interpreter exit: [`shutdown`] is registered with `atexit` on import
//! (atexit functions run before finalization starts), releases the GIL and waits, for at most
//! [`SHUTDOWN_TIMEOUT`], until every task and every hand-over thread has ended. A hand-over waiting for the
//! GIL then gets it and finishes; one not started yet is dropped, its Python references released by PyO3's
//! deferred pool without the GIL. After that, no runtime thread exists that could take the GIL, and a bus
//! call raises `pqkit.bus.Closed`.
//!
//! The bridge itself: [`future_into_py`] runs a Rust future on the runtime and returns an `asyncio.Future` of
//! the caller's running loop. The runtime's worker threads never wait for the GIL: the result is handed over
//! from tokio's blocking pool, with `loop.call_soon_threadsafe`. Cancelling the asyncio future aborts the Rust
//! future (dropped at its next await point).

use crate::bus_errors::{BusClosed, BusError};
use pyo3::IntoPyObjectExt;
use pyo3::prelude::*;
use pyo3::types::PyAny;
use std::future::Future;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::runtime::{Handle, Runtime};
use tokio::task::AbortHandle;

/// How long interpreter exit waits for the runtime's tasks and threads to end.
pub(crate) const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

enum State {
    /// No bus operation ran yet: the runtime is built on first use.
    NotStarted,
    Running(Runtime),
    /// The interpreter is exiting: the runtime was shut down and is not built again.
    Stopped,
}

static RUNTIME: Mutex<State> = Mutex::new(State::NotStarted);

/// A handle on the running runtime, built on first use; `Closed` once the interpreter is exiting.
fn handle() -> PyResult<Handle> {
    let mut g = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let State::NotStarted = *g {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("pqkit-bus")
            .build()
            .map_err(|e| BusError::new_err(format!("pqkit.bus: cannot start the tokio runtime: {e}")))?;
        *g = State::Running(rt);
    }
    match &*g {
        State::Running(rt) => Ok(rt.handle().clone()),
        _ => Err(BusClosed::new_err("pqkit.bus: the interpreter is exiting; the bus runtime has stopped")),
    }
}

/// Stops the runtime (idempotent): every task is dropped, and the call returns once the runtime's threads
/// have ended or [`SHUTDOWN_TIMEOUT`] has passed. Registered with `atexit` by [`register`]; the GIL is released
/// meanwhile so that a result being handed over can finish.
#[pyfunction]
#[pyo3(name = "_bus_shutdown")]
pub(crate) fn shutdown(py: Python<'_>) {
    let old = std::mem::replace(&mut *RUNTIME.lock().unwrap_or_else(PoisonError::into_inner), State::Stopped);
    if let State::Running(rt) = old {
        py.detach(move || rt.shutdown_timeout(SHUTDOWN_TIMEOUT));
    }
}

/// Runs `fut` on the runtime; returns an `asyncio.Future` of the running loop that gets its outcome.
pub(crate) fn future_into_py<'py, F, T>(py: Python<'py>, fut: F) -> PyResult<Bound<'py, PyAny>>
where
    F: Future<Output = PyResult<T>> + Send + 'static,
    T: for<'a> IntoPyObject<'a> + Send + 'static,
{
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    let py_fut = event_loop.call_method0("create_future")?;
    let rt = handle()?;
    let inner = rt.spawn(fut);
    py_fut.call_method1("add_done_callback", (CancelOnDone { abort: inner.abort_handle() },))?;
    let (lp, pf) = (event_loop.unbind(), py_fut.clone().unbind());
    rt.spawn(async move {
        let outcome = match inner.await {
            Ok(r) => r,
            Err(e) if e.is_panic() => Err(BusError::new_err("pqkit.bus: an operation panicked (a bug in pqkit)")),
            Err(_) => return, // aborted: the asyncio future was cancelled
        };
        // The GIL is taken on the blocking pool, never on a worker thread.
        drop(tokio::task::spawn_blocking(move || Python::attach(|py| hand_over(py, &lp, pf, outcome))));
    });
    Ok(py_fut)
}

/// Schedules the outcome onto the future's loop. A loop that is closed has nobody waiting: the outcome is
/// dropped.
fn hand_over<T>(py: Python<'_>, lp: &Py<PyAny>, fut: Py<PyAny>, outcome: PyResult<T>)
where
    T: for<'a> IntoPyObject<'a>,
{
    let outcome = outcome.and_then(|v| v.into_py_any(py)).map_err(|e| e.into_value(py).into_any());
    let _ = lp.bind(py).call_method1("call_soon_threadsafe", (Complete { fut, outcome: Some(outcome) },));
}

/// The callback run on the loop: sets the result or exception unless the future is done (cancelled).
#[pyclass(module = "pqkit.bus")]
struct Complete {
    fut: Py<PyAny>,
    outcome: Option<Result<Py<PyAny>, Py<PyAny>>>,
}
fits_python_alignment!(Complete);

#[pymethods]
impl Complete {
    fn __call__(&mut self, py: Python<'_>) -> PyResult<()> {
        let fut = self.fut.bind(py);
        let Some(outcome) = self.outcome.take() else { return Ok(()) };
        if fut.call_method0("done")?.is_truthy()? {
            return Ok(());
        }
        match outcome {
            Ok(v) => fut.call_method1("set_result", (v,))?,
            Err(e) => fut.call_method1("set_exception", (e,))?,
        };
        Ok(())
    }
}

/// The future's done callback: a cancelled future aborts its Rust task.
#[pyclass(module = "pqkit.bus", frozen)]
struct CancelOnDone {
    abort: AbortHandle,
}
fits_python_alignment!(CancelOnDone);

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, fut: &Bound<'_, PyAny>) -> PyResult<()> {
        if fut.call_method0("cancelled")?.is_truthy()? {
            self.abort.abort();
        }
        Ok(())
    }
}

/// Registers [`shutdown`] with `atexit`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let f = wrap_pyfunction!(shutdown, m)?;
    m.add_function(f.clone())?;
    m.py().import("atexit")?.call_method1("register", (f,))?;
    Ok(())
}
