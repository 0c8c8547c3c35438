//! A profiling loop for the NATS `send_10k` rows (the pqkit-bench code, crates/pqkit-bench/src/algs/bus_nats.rs):
//! one candidate only, repeated, against a local `nats-server` it starts. Not a benchmark (pqkit-bench measures
//! both candidates interleaved); it prints only the messages received. Use it under `perf`:
//!
//! ```text
//! perf stat -e task-clock target/release/examples/nats_profile sealed 64 20   # CPU of this process and the server
//! perf record -g target/release/examples/nats_profile plain 64 20
//! ```
//! Modes: `sealed`, `ckpt` (sealed with signed checkpoints), `plain` (async-nats); then the payload size and
//! the number of 10,000-message samples.
//! With `NATS_PROFILE_ALLOCS` set it also counts the heap allocations of this process per message received
//! (a counting global allocator, off otherwise: one relaxed load per allocation).
#[path = "../../pqkit-bench/src/algs/bus_nats.rs"]
#[allow(dead_code)] // pqkit-bench uses the whole module; this example only its `send_10k` loops
mod bus_nats;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Counts allocations while [`COUNTING`] is on (the system allocator does the work).
struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds `GlobalAlloc`'s contract;
// the counter has no effect on the memory returned.
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's layout is passed through unchanged (the caller upholds `alloc`'s contract).
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        // SAFETY: `p` came from `System.alloc` with layout `l` (every allocation goes through `alloc` above).
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: as `dealloc`; the caller upholds `realloc`'s contract for `n`.
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// CPU time (ns) of every live thread of process `pid` (`self` for this one), from `/proc/<pid>/task/*/schedstat`.
fn cpu_ns(pid: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()))
        .sum()
}

/// Per thread of process `pid`: (thread id, name, CPU ns, ns waiting for a CPU, times scheduled), from
/// `/proc/<pid>/task/*/{comm,schedstat}`.
fn threads(pid: &str) -> Vec<(String, String, u64, u64, u64)> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    let mut v: Vec<_> = tasks
        .flatten()
        .filter_map(|t| {
            let comm = std::fs::read_to_string(t.path().join("comm")).ok()?;
            let st = std::fs::read_to_string(t.path().join("schedstat")).ok()?;
            let f: Vec<u64> = st.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            Some((t.file_name().to_string_lossy().into_owned(), comm.trim().to_string(), f[0], f[1], f[2]))
        })
        .collect();
    v.sort();
    v
}

/// Read and write system calls so far of process `pid` (`self` for this one), from `/proc/<pid>/io`.
fn syscalls(pid: &str) -> (u64, u64) {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let field =
        |k: &str| io.lines().find_map(|l| l.strip_prefix(k)).and_then(|v| v.trim().parse::<u64>().ok()).unwrap_or(0);
    (field("syscr:"), field("syscw:"))
}

fn main() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "sealed".into());
    let size: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(64);
    let iters: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let server = bus_nats::start_local()?;
    let url = server.url.clone();
    let server_pid = server.pid().to_string();
    let label = mode.clone();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let got = rt.block_on(async move {
        let p = bus_nats::pqkit_agents(&url).await?;
        let pubc = async_nats::connect(&url).await.map_err(|e| e.to_string())?;
        let subc = async_nats::connect(&url).await.map_err(|e| e.to_string())?;
        let (mut got, mut times) = (0, Vec::new());
        let mut per_mode: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
        let before = (cpu_ns("self"), cpu_ns(&server_pid));
        let calls_before = (syscalls("self"), syscalls(&server_pid));
        let threads_before = threads("self");
        COUNTING.store(std::env::var_os("NATS_PROFILE_ALLOCS").is_some(), Ordering::Relaxed);
        // Several modes joined by `+` (e.g. `sealed+ckpt+plain`) run interleaved as pqkit-bench runs them: each
        // round runs every mode once, rotating which goes first. The totals are over all of them.
        let modes: Vec<&str> = mode.split('+').collect();
        for k in 0..iters {
            for j in 0..modes.len() {
                let m = modes[(k + j) % modes.len()];
                let s = match m {
                    "plain" => bus_nats::send_plain(&pubc, &subc, &format!("bench.plain.{size}"), size).await?,
                    "ckpt" => bus_nats::send_pqkit(&p, &format!("bench.ckpt.{size}"), size, true).await?,
                    _ => bus_nats::send_pqkit(&p, &format!("bench.sealed.{size}"), size, false).await?,
                };
                got += s.received;
                if modes.len() > 1 {
                    per_mode.entry(m).or_default().push(s.elapsed.as_secs_f64() * 1e3);
                }
                times.push((s.elapsed.as_secs_f64() * 1e3, s.publish.as_secs_f64() * 1e3));
                if std::env::var_os("NATS_PROFILE_VERBOSE").is_some() {
                    eprintln!("sample {k} {m}: {:.1} ms, stalls {}", s.elapsed.as_secs_f64() * 1e3, s.stalls);
                }
            }
        }
        let after = (cpu_ns("self"), cpu_ns(&server_pid));
        let calls_after = (syscalls("self"), syscalls(&server_pid));
        // Per thread of this process: CPU, time runnable but waiting, and wake-ups (times scheduled) per
        // message: which thread is the critical path, and how often each one sleeps and is woken.
        for (tid, name, cpu, wait, runs) in threads("self") {
            let Some((_, _, c0, w0, r0)) = threads_before.iter().find(|t| t.0 == tid) else { continue };
            let per = |a: u64, b: u64| (a.saturating_sub(b)) as f64 / (got.max(1) as f64);
            if cpu > *c0 {
                eprintln!(
                    "thread {tid} {name}: cpu {:.0} ns, waiting for a cpu {:.0} ns, scheduled {:.3} times per message",
                    per(cpu, *c0),
                    per(wait, *w0),
                    per(runs, *r0)
                );
            }
        }
        if COUNTING.swap(false, Ordering::Relaxed) {
            // Both sides of the loop (publish and receive) and the bench's own per-sample set-up, per message.
            eprintln!("allocations per message: {:.2}", ALLOCS.load(Ordering::Relaxed) as f64 / got.max(1) as f64);
        }
        // CPU per received message over the sample loop only (not the set-up): this process (publisher and
        // subscriber), and the server. Nanosecond resolution (schedstat), unlike the 10 ms ticks below.
        let per = |a: u64, b: u64| (a.saturating_sub(b)) as f64 / (got.max(1) as f64);
        eprintln!(
            "cpu per message: this process {:.0} ns, nats-server {:.0} ns",
            per(after.0, before.0),
            per(after.1, before.1)
        );
        // Messages per read and per write system call: how well each side batches (a slower publisher hands
        // the connection fewer messages per wake-up, and every hop then makes more, smaller calls).
        let msgs = |a: u64, b: u64| (got as f64) / (a.saturating_sub(b).max(1) as f64);
        eprintln!(
            "messages per syscall: this process {:.1} per read, {:.1} per write; nats-server {:.1} per read, {:.1} per write",
            msgs(calls_after.0.0, calls_before.0.0),
            msgs(calls_after.0.1, calls_before.0.1),
            msgs(calls_after.1.0, calls_before.1.0),
            msgs(calls_after.1.1, calls_before.1.1)
        );
        for (m, mut v) in per_mode {
            v.sort_by(|a, b| a.total_cmp(b));
            eprintln!("{m}: median sample {:.2} ms over {} samples", v[v.len() / 2], v.len());
        }
        Ok::<_, String>((got, times))
    })?;
    let (got, mut times) = got;
    // CPU seconds (user + system) of this process and of the server, from /proc (10 ms ticks).
    let cpu = |pid: &str| -> f64 {
        let st = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let f: Vec<&str> = st.rsplit(')').next().unwrap_or("").split_whitespace().collect();
        let t = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
        (t(11) + t(12)) / 100.0
    };
    let (me, srv) = (cpu("self"), cpu(&server.pid().to_string()));
    eprintln!("cpu: this process {:.2} s, nats-server {:.2} s", me, srv);
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let med = times.get(times.len() / 2).copied().unwrap_or_default();
    // Not a benchmark figure: a sanity line for the profile (median sample, ms; first publish to last receive).
    println!("{label} {size} B: {got} messages received; median sample {:.1} ms (publish side {:.1} ms)", med.0, med.1);
    Ok(())
}
