//! Message priorities: the four levels, their wire byte. Below the envelope (which carries the byte) and the
//! queue (which orders by it); re-exported as `pqkit_bus::Priority` and `pqkit_bus::queue::Priority`.

/// Number of priority levels.
pub const LEVELS: usize = 4;
/// A message priority. Higher is delivered first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Priority {
    /// Background traffic.
    Low = 0,
    /// The default.
    #[default]
    Normal = 1,
    /// Ahead of normal traffic.
    High = 2,
    /// Ahead of everything.
    Critical = 3,
}

impl Priority {
    /// The priority for a wire byte, if valid (0..=3).
    pub fn from_u8(b: u8) -> Option<Self> {
        Some(match b {
            0 => Priority::Low,
            1 => Priority::Normal,
            2 => Priority::High,
            3 => Priority::Critical,
            _ => return None,
        })
    }
    /// All levels, lowest first.
    pub const ALL: [Priority; LEVELS] = [Priority::Low, Priority::Normal, Priority::High, Priority::Critical];
}
