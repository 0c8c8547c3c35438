//! Options and counters every other part of the in-process bus uses: what a full queue does
//! ([`Backpressure`]), per-subscription options ([`SubOptions`]), the broker's counters and their public
//! snapshot ([`Metrics`]), the identity hasher of the subscription table, and the poison-tolerant lock helper.

use std::sync::atomic::AtomicU64;
use std::sync::{Mutex, MutexGuard};

/// Sealed bodies up to this many bytes (payload + tag) are stored inline, without an allocation.
pub(super) const INLINE: usize = 80;

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding a bus lock cannot leave the queue half-updated in a way that breaks memory safety;
    // keep serving rather than cascading the panic.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a full subscription queue does with a new message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backpressure {
    /// The publisher waits until there is room (only publishers to this subscription wait).
    Block,
    /// The oldest message of the lowest non-empty level is dropped (or the new one, if it is lower than
    /// everything queued). Counted as `dropped`.
    #[default]
    DropOldest,
    /// This subscription does not get the message; `publish` returns [`Error::QueueFull`](crate::Error::QueueFull)
    /// after delivering to every other subscriber. Counted as `refused`.
    Fail,
}

/// Options of one subscription.
#[derive(Clone, Copy, Debug)]
pub struct SubOptions {
    /// Queue capacity in messages (at least 1). Default: the bus's.
    pub capacity: Option<usize>,
    /// What a full queue does. Default: [`Backpressure::DropOldest`].
    pub backpressure: Backpressure,
}

impl Default for SubOptions {
    fn default() -> Self {
        SubOptions { capacity: None, backpressure: Backpressure::DropOldest }
    }
}

/// Hashing for subscription ids (sequential `u64`s chosen by the bus, never by a peer): the splitmix64
/// finaliser instead of SipHash, whose flooding resistance is not needed for keys nobody else picks.
#[derive(Clone, Copy, Default)]
pub(super) struct IdHash;

impl std::hash::BuildHasher for IdHash {
    type Hasher = IdHasher;
    fn build_hasher(&self) -> IdHasher {
        IdHasher(0)
    }
}

#[derive(Default)]
pub(super) struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) malformed: AtomicU64,
    pub(super) auth_failed: AtomicU64,
    pub(super) replayed: AtomicU64,
    pub(super) expired: AtomicU64,
    pub(super) unknown_key: AtomicU64,
    pub(super) unauthorised: AtomicU64,
    // Counters of subscriptions and sender slots that are gone.
    pub(super) retired_delivered: AtomicU64,
    pub(super) retired_received: AtomicU64,
    pub(super) retired_dropped: AtomicU64,
    pub(super) retired_refused: AtomicU64,
}

/// A snapshot of the bus counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Messages the broker accepted from publishers.
    pub published: u64,
    /// Messages placed in subscription queues.
    pub delivered: u64,
    /// Messages handed to subscribers after their checks.
    pub received: u64,
    /// Messages dropped by `DropOldest` back-pressure.
    pub dropped: u64,
    /// Messages refused by `Fail` back-pressure.
    pub refused: u64,
    /// Envelopes rejected as truncated or malformed.
    pub rejected_malformed: u64,
    /// Envelopes rejected because the tag failed (forged or wrongly keyed).
    pub rejected_auth: u64,
    /// Envelopes rejected as replays or reordered beyond the window.
    pub rejected_replayed: u64,
    /// Envelopes rejected under an expired (erased) epoch.
    pub rejected_expired: u64,
    /// Envelopes rejected for want of a key (unknown sender, subscription or epoch).
    pub rejected_unknown_key: u64,
    /// Operations or envelopes refused by the policy.
    pub rejected_unauthorised: u64,
    /// Messages no valid signed checkpoint covered in time (NATS sender authentication, docs/bus.md §9).
    pub rejected_unsigned: u64,
}

impl Metrics {
    /// Every rejected envelope or operation.
    pub fn rejected(&self) -> u64 {
        self.rejected_malformed
            + self.rejected_auth
            + self.rejected_replayed
            + self.rejected_expired
            + self.rejected_unknown_key
            + self.rejected_unauthorised
            + self.rejected_unsigned
    }
}
