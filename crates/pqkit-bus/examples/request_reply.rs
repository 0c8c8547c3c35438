//! A request/reply service: a worker thread answers `math.square` requests from a client, with a timeout.
//!
//! `cargo run -p pqkit-bus --example request_reply`

use pqkit_bus::{Bus, Error, Identity, Policy};
use std::time::Duration;

fn main() -> pqkit_bus::Result<()> {
    let server_id = Identity::generate("square-service")?;
    let client_id = Identity::generate("client")?;
    let policy = Policy::new().allow(server_id.id(), &[], &["math.square"])?.allow(client_id.id(), &["math.*"], &[])?;
    let bus = Bus::new(policy)?;
    let server = bus.connect(&server_id)?;
    let client = bus.connect(&client_id)?;

    let mut requests = server.subscribe("math.square")?;
    let worker = std::thread::spawn(move || {
        // Serve until the subscription is idle for a while.
        while let Ok(req) = requests.recv_timeout(Duration::from_millis(500)) {
            let Ok(bytes) = <[u8; 8]>::try_from(req.payload()) else { continue };
            let x = u64::from_le_bytes(bytes);
            let _ = server.reply(&req, &(x * x).to_le_bytes());
        }
    });

    for x in [3u64, 12, 1000] {
        let rep = client.request("math.square", &x.to_le_bytes(), Duration::from_secs(2))?;
        let y = u64::from_le_bytes(rep.payload().try_into().unwrap_or([0; 8]));
        println!("{x}^2 = {y} (answered by {})", rep.sender());
    }
    match client.request("math.cube", b"", Duration::from_millis(100)) {
        Err(Error::NoResponders { subject }) => println!("nobody serves {subject}"),
        other => println!("unexpected: {other:?}"),
    }
    worker.join().ok();
    Ok(())
}
