//! Tests of subscription lanes: their bounds, turns between busy lanes, and lanes across key rotation.

mod lane_tests {
    use super::super::{config::*, handle::*, state::*, subscription::*};

    use crate::identity::Identity;
    use crate::policy::Policy;
    use crate::queue::Priority;

    fn lanes(sub: &Subscription) -> (usize, usize) {
        let st = lock(&sub.shared.state);
        (st.lanes.len(), st.lane_held)
    }

    /// A handle's lane is made on its first delivery, freed (with its credit) at the first take after the
    /// handle is dropped, and the subscription holds at most `MAX_LANES`: later handles use the main queue,
    /// each still FIFO, nothing lost.
    #[test]
    fn lanes_are_bounded_and_freed_with_their_handles() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all());
            let bus = if sealed { b.build() } else { b.plain().build() }.unwrap();
            let a = bus.connect(&Identity::from_seed("lanes", &[5; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("l").unwrap();
            let mut p = a.publisher("l").unwrap();
            assert_eq!(lanes(&sub).0, 0, "no lane before the first delivery");
            p.publish(b"x", Priority::Normal).unwrap();
            assert_eq!(lanes(&sub).0, 1);
            assert!(lanes(&sub).1 >= 1, "the lane holds its message and credit");
            drop(p);
            let mut got = Vec::new();
            assert_eq!(sub.recv_batch(&mut got, 10).unwrap(), 1);
            assert_eq!(lanes(&sub), (0, 0), "a dropped handle's lane and credit are freed");

            let n = MAX_LANES + 4;
            let mut ps: Vec<_> = (0..n).map(|_| a.publisher("l").unwrap()).collect();
            for i in 0..5u8 {
                for (k, p) in ps.iter_mut().enumerate() {
                    p.publish(&[k as u8, i], Priority::Normal).unwrap();
                }
            }
            assert_eq!(lanes(&sub).0, MAX_LANES);
            got.clear();
            while sub.recv_batch(&mut got, 7).unwrap() > 0 {}
            assert_eq!(got.len(), 5 * n);
            let mut next = vec![0u8; n];
            for m in &got {
                let (k, i) = (m.payload()[0] as usize, m.payload()[1]);
                assert_eq!(i, next[k], "handle {k} out of order");
                next[k] += 1;
            }
            drop(ps);
            assert_eq!(sub.recv_batch(&mut got, 7).unwrap(), 0);
            assert_eq!(lanes(&sub), (0, 0));
            assert_eq!(bus.metrics().delivered, 1 + 5 * n as u64);
            // Messages still in a lane when the subscription goes count as delivered in the retired metrics.
            let mut p = a.publisher("l").unwrap();
            p.publish(b"y", Priority::Normal).unwrap();
            p.publish(b"z", Priority::Normal).unwrap();
            sub.unsubscribe();
            assert_eq!(bus.metrics().delivered, 3 + 5 * n as u64);
            assert!(matches!(p.publish(b"w", Priority::Normal), Ok(0)));
        }
    }

    /// A take from a lane gives the batch's buffers back to it and then lets go of it, by every receive path
    /// (`take_envelope` included): the subscription keeps no reference of its own, so a lane whose handle is
    /// dropped is seen as dead and freed (a live-looking dead lane would allow the direct take that 72fc5ca
    /// forbids while it holds messages).
    #[test]
    fn a_take_keeps_no_reference_to_the_lane() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all());
            let bus = if sealed { b } else { b.plain() }.build().unwrap();
            let a = bus.connect(&Identity::from_seed("a", &[1; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("t").unwrap();
            for way in 0..3 {
                let mut p = a.publisher("t").unwrap();
                p.publish(b"x", Priority::Normal).unwrap();
                p.publish(b"y", Priority::Normal).unwrap();
                assert_eq!(lanes(&sub).0, 1);
                let mut got = Vec::new();
                match way {
                    0 => assert!(sub.take_envelope().unwrap().is_some()),
                    1 => assert_eq!(sub.recv_batch(&mut got, 1).unwrap(), 1),
                    _ => assert_eq!(sub.drain(1, |_| {}).unwrap(), 1),
                }
                assert!(sub.back.is_none(), "way {way}: a lane reference outlived the hand-over");
                drop(p);
                // The dropped handle's lane still holds one message: merged (not taken directly), then freed.
                assert_eq!(sub.len(), 1, "way {way}");
                assert_eq!(lanes(&sub), (0, 0), "way {way}: the dead lane was freed");
                assert_eq!(sub.drain(10, |_| {}).unwrap(), 1);
            }
        }
    }
}

mod lane_turn_tests {
    use super::super::{config::*, handle::*};

    use crate::identity::Identity;
    use crate::policy::Policy;
    use crate::queue::Priority;

    /// Two handles' lanes holding one level only are taken from directly, whole, in turns (no merge into the
    /// main queue): each take returns one lane's messages, the other lane's come next even while the first
    /// handle keeps publishing, each handle stays FIFO, and nothing is lost, plain and sealed (the epochs of
    /// the lane left waiting stay counted, so its key is never erased under it, even across rotations).
    #[test]
    fn busy_single_level_lanes_are_taken_in_turns() {
        for sealed in [false, true] {
            let b = Bus::builder(Policy::allow_all()).rotate_after_messages(7);
            let bus = if sealed { b.build() } else { b.plain().build() }.unwrap();
            let a = bus.connect(&Identity::from_seed("turn", &[8; 32]).unwrap()).unwrap();
            let mut sub = a.subscribe("t").unwrap();
            let mut ps = [a.publisher("t").unwrap(), a.publisher("t").unwrap()];
            let mut next = [0u8; 2];
            let mut sent = [0u8; 2];
            let mut got = Vec::new();
            let mut last = None;
            for round in 0..20 {
                for _ in 0..5 {
                    for (k, p) in ps.iter_mut().enumerate() {
                        p.publish(&[k as u8, sent[k]], Priority::Normal).unwrap();
                        sent[k] += 1;
                    }
                }
                got.clear();
                let n = sub.recv_batch(&mut got, 100).unwrap();
                assert!(n >= 5, "round {round}: a whole lane per take ({n})");
                let k = got[0].payload()[0] as usize;
                assert!(got.iter().all(|m| m.payload()[0] as usize == k), "one handle's lane");
                assert_eq!(n, usize::from(sent[k] - next[k]), "round {round}: the whole lane");
                assert_ne!(Some(k), last, "round {round}: the lanes take turns");
                last = Some(k);
                assert!(lock(&sub.shared.state).q.is_empty(), "nothing merged into the main queue");
                for m in &got {
                    assert_eq!(m.payload()[1], next[k], "handle {k} out of order");
                    next[k] += 1;
                }
            }
            assert!(next[0].abs_diff(next[1]) <= 10, "lanes taken in turns: {next:?}");
            got.clear();
            while sub.recv_batch(&mut got, 1000).unwrap() > 0 {}
            let total: usize = next.iter().map(|&x| x as usize).sum::<usize>() + got.len();
            assert_eq!(total, 200);
            assert_eq!(bus.metrics().rejected(), 0);
        }
    }

    /// A dropped handle's lane that still holds messages under an old key epoch keeps that key alive: a take
    /// while another handle's lane holds only newer epochs (and a rotation's grant is pending) does not go
    /// straight to that lane with a floor that leaves the dead lane's epochs out, so nothing is rejected.
    #[test]
    fn a_dead_lanes_old_epoch_survives_a_take_from_another_lane() {
        let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(7).build().unwrap();
        let a = bus.connect(&Identity::from_seed("dead", &[12; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut pa = a.publisher("t").unwrap();
        for i in 0..8u8 {
            pa.publish(&[0, i], Priority::Normal).unwrap();
        }
        drop(pa);
        let mut pb = a.publisher("t").unwrap();
        for i in 0..3u8 {
            pb.publish(&[1, i], Priority::Normal).unwrap();
        }
        let mut got = Vec::new();
        while sub.recv_batch(&mut got, 4).unwrap() > 0 {}
        assert_eq!(bus.metrics().rejected(), 0);
        let mut a_seen: Vec<u8> = got.iter().filter(|m| m.payload()[0] == 0).map(|m| m.payload()[1]).collect();
        a_seen.sort_unstable();
        assert_eq!(a_seen, (0..8).collect::<Vec<u8>>(), "the dropped handle's messages all arrive");
        assert_eq!(got.len(), 11);
    }

    /// Partial takes continue the lane whose turn it is (so a handle's run is not interleaved with another's
    /// message by message), but a turn ends after the messages its lane held when it began: a handle that
    /// keeps its lane full cannot keep the other waiting.
    #[test]
    fn a_lane_turn_is_bounded() {
        let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
        let a = bus.connect(&Identity::from_seed("turn3", &[10; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut pa = a.publisher("t").unwrap();
        let mut pb = a.publisher("t").unwrap();
        for i in 0..3u8 {
            pa.publish(&[0, i], Priority::Normal).unwrap();
        }
        pb.publish(&[1, 0], Priority::Normal).unwrap();
        let mut order = Vec::new();
        let mut got = Vec::new();
        for i in 3..9u8 {
            // A publishes one more before every take: its lane never empties.
            pa.publish(&[0, i], Priority::Normal).unwrap();
            got.clear();
            assert_eq!(sub.recv_batch(&mut got, 1).unwrap(), 1);
            order.push((got[0].payload()[0], got[0].payload()[1]));
        }
        // A's turn: the 4 it held when its turn began (3 + the one published before the first take); then B.
        assert_eq!(&order[..5], &[(0, 0), (0, 1), (0, 2), (0, 3), (1, 0)], "{order:?}");
        assert_eq!(order[5], (0, 4));
    }

    /// Lanes holding different levels (or one lane two levels) are merged as before: priority order holds.
    #[test]
    fn lanes_of_several_levels_are_merged_in_priority_order() {
        let bus = Bus::builder(Policy::allow_all()).plain().build().unwrap();
        let a = bus.connect(&Identity::from_seed("turn2", &[9; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("t").unwrap();
        let mut p0 = a.publisher("t").unwrap();
        let mut p1 = a.publisher("t").unwrap();
        for i in 0..4u8 {
            p0.publish(&[0, i], Priority::Low).unwrap();
            p1.publish(&[1, i], Priority::High).unwrap();
        }
        let mut got = Vec::new();
        assert_eq!(sub.recv_batch(&mut got, 100).unwrap(), 8);
        assert!(got[..4].iter().all(|m| m.priority() == Priority::High), "the high level first");
        assert!(got[4..].iter().all(|m| m.priority() == Priority::Low));
    }
}

mod lane_rotation_tests {
    use super::super::{config::*, handle::*};

    use crate::identity::Identity;
    use crate::policy::Policy;
    use crate::queue::Priority;

    /// A handle whose lane still has credit while other traffic rotates the subscription's delivery key twice
    /// (and the subscriber drains, erasing the old key) must not seal its next message under its old key:
    /// the lane carries the current epoch, the handle takes a stream of the new key, and nothing is rejected.
    #[test]
    fn a_lane_handle_follows_rotation() {
        let bus = Bus::builder(Policy::allow_all()).rotate_after_messages(3).build().unwrap();
        let a = bus.connect(&Identity::from_seed("rot-a", &[6; 32]).unwrap()).unwrap();
        let b = bus.connect(&Identity::from_seed("rot-b", &[7; 32]).unwrap()).unwrap();
        let mut sub = a.subscribe("rot").unwrap();
        let mut pa = a.publisher("rot").unwrap();
        let mut pb = b.publisher("rot").unwrap();
        let mut got = Vec::new();
        pa.publish(&[0], Priority::Normal).unwrap();
        sub.recv_batch(&mut got, 10).unwrap();
        let first = pa.links[0].ds.key.as_ref().map(|k| k.epoch).unwrap();
        for i in 1..20u8 {
            pb.publish(&[i], Priority::Normal).unwrap();
            while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
        }
        let cur = lock(&sub.shared.state).keys.as_ref().map(|k| k.cur.epoch).unwrap();
        assert!(cur >= first + 2, "rotated twice: {first} -> {cur}");
        let held: Vec<u32> = sub.ring.as_ref().unwrap().keys.iter().map(|k| k.0).collect();
        assert!(!held.contains(&first), "the subscriber erased epoch {first}: {held:?}");
        assert!(lock(&pa.links[0].lane_ref().st).credit > 0, "A's lane still has credit (no refill on the way)");
        pa.publish(&[100], Priority::Normal).unwrap();
        while sub.recv_batch(&mut got, 100).unwrap() > 0 {}
        assert_eq!(got.len(), 21);
        assert_eq!(got.last().unwrap().payload(), [100]);
        assert_eq!(bus.metrics().rejected(), 0, "{:?}", bus.metrics());
        assert!(pa.links[0].ds.key.as_ref().unwrap().epoch + 1 >= cur);
    }
}
