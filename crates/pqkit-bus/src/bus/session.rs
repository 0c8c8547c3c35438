//! The agent's end of its session with the broker: opening grants, the sender keys it holds per topic, and
//! the streams of those keys that publisher handles take and return.

use super::config::lock;
use super::state::{COUNTER_BITS, GRANT_AAD, GRANT_LEN, MAX_PUBLISHERS};
use crate::{Error, Result};
use pqkit::aead::{Aead, Aes256Gcm};
use std::sync::{Arc, Mutex};
use zeroize::Zeroizing;

/// The agent's end of its session.
pub(super) struct AgentSession {
    /// Opens grants from the broker.
    pub(super) recv: Aes256Gcm,
}

/// Opens a grant: returns (kind, id, epoch, key).
pub(super) fn open_grant(s: &AgentSession, g: &[u8]) -> Result<(u8, u64, u32, Zeroizing<[u8; 32]>)> {
    if g.len() != GRANT_LEN {
        return Err(Error::Malformed { reason: "grant has the wrong length" });
    }
    let mut body = Zeroizing::new([0u8; GRANT_LEN - 12 - 16]);
    body.copy_from_slice(&g[12..GRANT_LEN - 16]);
    s.recv
        .open_in_place_detached(&g[..12], GRANT_AAD, body.as_mut(), &g[GRANT_LEN - 16..])
        .map_err(|_| Error::AuthFailed)?;
    let mut key = Zeroizing::new([0u8; 32]);
    key.copy_from_slice(&body[13..45]);
    let id = u64::from_be_bytes(body[1..9].try_into().map_err(|_| Error::Malformed { reason: "grant" })?);
    let epoch = u32::from_be_bytes(body[9..13].try_into().map_err(|_| Error::Malformed { reason: "grant" })?);
    Ok((body[0], id, epoch, key))
}

/// The agent's sender key for one topic and epoch, and the pool of its sequence streams (see
/// [`MAX_PUBLISHERS`]): each publisher handle takes one stream and alone counts in it, so no (key, nonce)
/// pair repeats and each stream reaches the broker in order.
pub(super) struct SendKey {
    pub(super) epoch: u32,
    pub(super) aead: Aes256Gcm,
    pub(super) streams: Mutex<StreamPool>,
}

#[derive(Default)]
pub(super) struct StreamPool {
    /// Streams never handed out start here.
    pub(super) next: u32,
    /// Returned streams: (id, next counter value).
    pub(super) free: Vec<(u32, u64)>,
}

/// A publisher handle's stream of one sender key.
pub(super) struct Stream {
    pub(super) key: Arc<SendKey>,
    pub(super) id: u32,
    pub(super) next: u64,
}

impl Stream {
    pub(super) fn take(key: Arc<SendKey>, topic: &str) -> Result<Stream> {
        let (id, next) = {
            let mut pool = lock(&key.streams);
            match pool.free.pop() {
                Some(s) => s,
                None if (pool.next as usize) < MAX_PUBLISHERS => {
                    pool.next += 1;
                    (pool.next - 1, 0)
                }
                None => return Err(Error::TooManyPublishers { subject: topic.into() }),
            }
        };
        Ok(Stream { key, id, next })
    }

    /// The next sequence number of this stream.
    pub(super) fn seq(&mut self) -> Result<u64> {
        if self.next >= 1 << COUNTER_BITS {
            // Unreachable with rotation by count (capped below 2^40), kept so a nonce can never wrap.
            return Err(Error::Expired { epoch: self.key.epoch });
        }
        self.next += 1;
        Ok((u64::from(self.id) << COUNTER_BITS) | (self.next - 1))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        lock(&self.key.streams).free.push((self.id, self.next));
    }
}
