//! The local APIC's interrupt vectors: the range handed to device IRQs and
//! the system vectors blksim delivers (x86's irq_vectors.h numbering).

/// First vector handed to device IRQs on each CPU.
pub const FIRST_DEVICE_VECTOR: u8 = 0x21;

/// Last device vector (0xea: 0xeb and up are system vectors).
pub const LAST_DEVICE_VECTOR: u8 = 0xea;

/// CALL_FUNCTION_SINGLE_VECTOR.
pub const CALL_FUNCTION_SINGLE_VECTOR: u8 = 0xfb;

/// LOCAL_TIMER_VECTOR.
pub const LOCAL_TIMER_VECTOR: u8 = 0xec;

/// POSTED_MSI_NOTIFICATION_VECTOR.
pub const POSTED_MSI_NOTIFICATION_VECTOR: u8 = 0xeb;
