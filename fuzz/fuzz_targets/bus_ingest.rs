//! `Bus::ingest` (the broker's entry point for envelopes from a transport) with arbitrary bytes, and with
//! genuine envelopes sealed by a connected agent's publisher then mutated. Properties: never a panic;
//! arbitrary bytes are never accepted; a genuine envelope is accepted once and refused on replay; any
//! single-bit change to a genuine envelope is refused.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pqkit_bus::{Bus, Identity, Policy, Priority, Publisher};
use std::cell::RefCell;

struct World {
    bus: Bus,
    publisher: Publisher,
}

thread_local! {
    static WORLD: RefCell<World> = RefCell::new({
        let bus = Bus::new(Policy::allow_all()).expect("bus");
        let agent = bus.connect(&Identity::from_seed("fuzzer", &[2u8; 32]).expect("identity")).expect("connect");
        let publisher = agent.publisher("fuzz.in").expect("publisher");
        World { bus, publisher }
    });
}

fuzz_target!(|data: &[u8]| {
    WORLD.with(|w| {
        let w = &mut *w.borrow_mut();
        assert!(w.bus.ingest(data).is_err(), "arbitrary bytes were accepted by ingest");
        if let Some((&sel, payload)) = data.split_first() {
            let prio = Priority::ALL[(sel & 3) as usize];
            let env = w.publisher.seal(payload, prio, None).expect("seal");
            let mut bad = env.clone();
            let bit = (sel as usize * 131 + payload.len()) % (bad.len() * 8);
            bad[bit / 8] ^= 1 << (bit % 8);
            assert!(w.bus.ingest(&bad).is_err(), "an envelope with bit {bit} flipped was accepted");
            w.bus.ingest(&env).expect("a genuine envelope is accepted");
            assert!(w.bus.ingest(&env).is_err(), "a replayed envelope was accepted");
        }
    });
});
