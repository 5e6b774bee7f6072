//! ioengines: which ones blksim simulates, which fio engines it rejects and
//! why, and the option table of each simulated engine.

use super::options::{OptSpec, IO_URING, LIBAIO, PVSYNC2};
use super::settings::Refusal;

/// An engine blksim simulates (the `JobConfig` engine before its options).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EngineName {
    Sync,
    Psync,
    Pvsync,
    Pvsync2,
    Libaio,
    IoUring,
    IoUringCmd,
    Null,
    Posixaio,
}

/// Engines sharing one option table share option values (fio copies the
/// template's engine options only to a job whose engine has the same table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OptionTable {
    None,
    IoUring,
    Libaio,
    Pvsync2,
}

impl OptionTable {
    pub fn specs(self) -> &'static [OptSpec] {
        match self {
            OptionTable::None => &[],
            OptionTable::IoUring => IO_URING,
            OptionTable::Libaio => LIBAIO,
            OptionTable::Pvsync2 => PVSYNC2,
        }
    }
}

impl EngineName {
    pub fn option_table(self) -> OptionTable {
        match self {
            EngineName::IoUring | EngineName::IoUringCmd => OptionTable::IoUring,
            EngineName::Libaio => OptionTable::Libaio,
            EngineName::Pvsync2 => OptionTable::Pvsync2,
            EngineName::Sync | EngineName::Psync | EngineName::Pvsync | EngineName::Null | EngineName::Posixaio => {
                OptionTable::None
            }
        }
    }
}

pub(crate) const SIMULATED: &str = "psync, sync, pvsync, pvsync2, libaio, posixaio, io_uring, io_uring_cmd and null";

/// Block I/O engines whose path blksim does not simulate.
const BLOCK_NOT_MODELLED: &[&str] = &["vsync", "mmap", "splice", "solarisaio", "windowsaio"];

/// fio's other engines: they do not do block I/O the way blksim simulates it
/// (network, RDMA, HTTP, pmem, CPU burners, file operations, user-space
/// drivers, passthrough libraries).
const NOT_BLOCK: &[&str] = &[
    "net",
    "netsplice",
    "cpuio",
    "rdma",
    "e4defrag",
    "falloc",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
    "dev-dax",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "libpmem",
    "http",
    "nbd",
    "dfs",
    "nfs",
    "xnvme",
    "rbd",
    "rados",
    "libiscsi",
    "mtd",
    "libzbc",
    "libblkio",
    "libcufile",
    "libhipfile",
    "exec",
    "cpp_null",
    "sg",
    "ftruncate",
    "page_fault",
    "spdk",
    "librpma_apm",
    "librpma_gpspm",
    "guasi",
    "binject",
    "external",
];

/// The modelled engines by their `ioengine=` names.
const MODELLED: [(&str, EngineName); 9] = [
    ("sync", EngineName::Sync),
    ("psync", EngineName::Psync),
    ("pvsync", EngineName::Pvsync),
    ("pvsync2", EngineName::Pvsync2),
    ("libaio", EngineName::Libaio),
    ("io_uring", EngineName::IoUring),
    ("io_uring_cmd", EngineName::IoUringCmd),
    ("null", EngineName::Null),
    ("posixaio", EngineName::Posixaio),
];

impl EngineName {
    /// Its `ioengine=` name.
    pub(crate) fn name(self) -> &'static str {
        MODELLED.iter().find(|m| m.1 == self).map_or("?", |m| m.0)
    }
}

/// The engine named by `ioengine=`, or the message rejecting it.
pub(crate) fn classify(value: &str) -> Result<EngineName, Refusal> {
    let name = value.trim();
    if let Some(&(_, engine)) = MODELLED.iter().find(|m| m.0 == name) {
        return Ok(engine);
    }
    Err(if BLOCK_NOT_MODELLED.contains(&name) {
        Refusal::NotModelled(format!("ioengine={name} is not modelled by blksim; blksim simulates {SIMULATED}"))
    } else if NOT_BLOCK.contains(&name) || name.starts_with("external:") || name.contains('/') {
        Refusal::NotModelled(format!("ioengine={name} is not block I/O; blksim simulates {SIMULATED}"))
    } else {
        Refusal::Bad(format!("ioengine={name} is not an engine fio knows; blksim simulates {SIMULATED}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_are_classified() {
        assert_eq!(classify("io_uring").unwrap(), EngineName::IoUring);
        assert_eq!(classify("null").unwrap(), EngineName::Null);
        let e = classify("cpuio").unwrap_err();
        let e = e.to_string();
        assert!(e.contains("not block I/O") && e.contains("psync, sync"), "{e}");
        assert!(classify("mmap").unwrap_err().to_string().contains("not modelled"));
        assert!(classify("external:/tmp/x.so").unwrap_err().to_string().contains("not block I/O"));
        assert!(classify("iouring").unwrap_err().to_string().contains("not an engine fio knows"));
        assert!(matches!(classify("mmap"), Err(Refusal::NotModelled(_))));
        assert!(matches!(classify("iouring"), Err(Refusal::Bad(_))));
        assert_eq!(EngineName::IoUringCmd.option_table(), EngineName::IoUring.option_table());
    }
}
