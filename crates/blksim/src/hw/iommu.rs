//! Interrupt-remapping hardware (state): the unit that remaps or posts
//! interrupt messages, one at a time.

/// A socket's interrupt-remapping unit: one interrupt message at a time.
#[derive(Clone, Debug, Default)]
pub(crate) struct IommuState {
    pub messages: u64,
    pub free_at_ns: u64,
    pub remap_ns: u64,
    pub post_ns: u64,
    pub busy_ns: u64,
}
