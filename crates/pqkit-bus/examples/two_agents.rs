//! Two agents exchanging sealed messages on a bus whose policy names each of them.
//!
//! `cargo run -p pqkit-bus --example two_agents`

use pqkit_bus::{Bus, Identity, Policy, Priority};

fn main() -> pqkit_bus::Result<()> {
    let alice = Identity::generate("alice")?;
    let bob = Identity::generate("bob")?;
    // Alice may publish sensor readings and read commands; Bob the other way round.
    let policy = Policy::new().allow(alice.id(), &["sensors.>"], &["commands.alice"])?.allow(
        bob.id(),
        &["commands.*"],
        &["sensors.>"],
    )?;
    let bus = Bus::new(policy)?;
    println!("broker {} ({})", bus.identity().name(), bus.identity().id());

    // Each connect runs the hybrid handshake (ML-KEM-768 + X25519, ML-DSA-65 + Ed25519 signatures).
    let a = bus.connect(&alice)?;
    let b = bus.connect(&bob)?;

    let mut readings = b.subscribe("sensors.*.temperature")?;
    let mut commands = a.subscribe("commands.alice")?;

    a.publish("sensors.kitchen.temperature", b"21.5", Priority::Normal)?;
    a.publish("sensors.attic.temperature", b"38.0", Priority::High)?;
    for _ in 0..2 {
        let m = readings.recv()?;
        println!(
            "bob got {:?} from {} on {} ({:?})",
            std::str::from_utf8(m.payload()).unwrap_or("?"),
            m.sender(),
            m.subject(),
            m.priority()
        );
    }
    b.publish("commands.alice", b"open the attic window", Priority::Critical)?;
    let m = commands.recv()?;
    println!("alice got {:?} from {}", std::str::from_utf8(m.payload()).unwrap_or("?"), m.sender());

    // Bob may not publish sensor readings: the policy refuses it.
    println!(
        "bob publishing a reading: {}",
        b.publish("sensors.fake.temperature", b"-40", Priority::Normal).unwrap_err()
    );
    println!("{:?}", bus.metrics());
    Ok(())
}
