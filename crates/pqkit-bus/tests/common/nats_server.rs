//! A real `nats-server` for tests: started on a free loopback port with JetStream (`-js`) and a temporary store
//! directory, ready when it accepts a connection and answers with its `INFO` line, killed on drop. No mock stands
//! in for NATS in the tests that use it.
//!
//! A missing binary is a test failure (never a silent skip): `install nats-server (apt-get install nats-server)`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What a test prints when the binary is missing.
pub const INSTALL_HINT: &str = "install nats-server (apt-get install nats-server)";

/// A `nats-server` child process with its store directory.
pub struct NatsServer {
    bin: PathBuf,
    port: u16,
    store: tempfile::TempDir,
    child: Option<Child>,
}

/// The `nats-server` binary: `$NATS_SERVER`, then `PATH`, then the Debian location (`/usr/sbin`, often not on a
/// non-root user's `PATH`).
pub fn find_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("NATS_SERVER") {
        return Some(PathBuf::from(p));
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/sbin", "/usr/local/sbin", "/usr/local/bin", "/usr/bin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("nats-server")).find(|p| p.is_file())
}

fn free_port() -> u16 {
    // Bind :0 and let the OS choose; released just before the server binds it.
    let l = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().expect("local addr").port()
}

impl NatsServer {
    /// Starts a server on a free port; panics with [`INSTALL_HINT`] if the binary is missing.
    pub fn start() -> NatsServer {
        let bin = find_binary().unwrap_or_else(|| panic!("nats-server not found on PATH: {INSTALL_HINT}"));
        let store = tempfile::tempdir().expect("temporary store directory");
        let mut s = NatsServer { bin, port: free_port(), store, child: None };
        s.spawn();
        s
    }

    fn spawn(&mut self) {
        let child = Command::new(&self.bin)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string(), "-js", "-sd"])
            .arg(self.store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}; {INSTALL_HINT}", self.bin.display()));
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(c) = self.child.as_mut()
                && let Ok(Some(st)) = c.try_wait()
            {
                panic!("nats-server exited during start-up ({st}) on port {}", self.port);
            }
            if let Ok(s) = TcpStream::connect(("127.0.0.1", self.port)) {
                let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                let mut line = String::new();
                if BufReader::new(s).read_line(&mut line).is_ok() && line.starts_with("INFO") {
                    return;
                }
            }
            assert!(Instant::now() < deadline, "nats-server did not accept on port {} within 15 s", self.port);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL: no graceful shutdown, as a crash) and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Starts the server again on the same port with the same store (JetStream recovers from it).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}
