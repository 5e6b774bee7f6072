//! What the fuzz targets share: the built-in machines, loaded once.

/// Built-in machine `name` (`spr-gen5` or `spr-dsa`), loaded at its first use.
pub fn machine(name: &str) -> &'static blksim::machine::Machine {
    static SPR: std::sync::OnceLock<blksim::machine::Machine> = std::sync::OnceLock::new();
    static DSA: std::sync::OnceLock<blksim::machine::Machine> = std::sync::OnceLock::new();
    let cell = if name == "spr-dsa" { &DSA } else { &SPR };
    cell.get_or_init(|| blksim::machine::builtin(name).unwrap())
}
