//! A socket's interrupt delivery (state): on Intel Xeons the Ubox, which
//! routes interrupt messages — device MSIs after remapping, posted-MSI
//! notifications, IPIs — to the cores, one at a time. A posted MSI is a
//! memory write into a PIR and does not pass it. The same one-at-a-time
//! server models an affected platform's MSI-X write serialisation
//! (`Platform::msi_serialisation`), which every device MSI write passes.

/// One socket's interrupt delivery.
#[derive(Clone, Debug, Default)]
pub(crate) struct InterruptRouter {
    pub(crate) free_at_ns: u64,
    service_ns: u64,
    /// Messages routed and the time spent on them.
    pub(crate) messages: u64,
    pub(crate) busy_ns: u64,
}

impl InterruptRouter {
    /// A router taking `service_ns` per message.
    pub(crate) fn new(service_ns: u64) -> InterruptRouter {
        InterruptRouter { service_ns, ..Default::default() }
    }

    /// Route a message ready at `at_ns`, after those ahead of it; returns
    /// when it leaves for its core.
    #[inline(always)]
    pub(crate) fn route(&mut self, at_ns: u64) -> u64 {
        let done = at_ns.max(self.free_at_ns) + self.service_ns;
        self.free_at_ns = done;
        self.busy_ns += self.service_ns;
        self.messages += 1;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_routed_one_at_a_time() {
        let mut r = InterruptRouter::new(50);
        assert_eq!([r.route(0), r.route(0), r.route(500)], [50, 100, 550]);
        assert_eq!((r.messages, r.busy_ns), (3, 150));
    }
}
