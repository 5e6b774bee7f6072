//! An NVMe controller's interrupt generation (state), per interrupt vector.
//!
//! NVM Express Base Specification 2.0, section 3.5 / NVMe PCIe Transport
//! (MSI-X based behavior) and the Interrupt Coalescing feature (Feature
//! Identifier 08h, Base Specification 1.4 section 5.21.1.8):
//!
//! - Completion queue entries the controller has posted and signalled
//!   stay outstanding until the host acknowledges them by writing the
//!   Completion Queue Head doorbell. While a vector has such entries, the
//!   controller does not signal it again: the host is known to be
//!   processing that queue ("if the Completion Queue Head Doorbell register
//!   is being updated ... the controller has a positive indication that
//!   completion queue entries are already being processed").
//! - Linux's `nvme_poll_cq` takes every entry that shows before it stops
//!   looking and writes the doorbell then, before `nvme_irq` completes the
//!   batch: the handler's step tells the controller when that write falls
//!   (`doorbell_due`). Entries posted before it are the handler's (its loop
//!   takes them). The doorbell is a posted write that reaches the
//!   controller one PCIe traversal later (`flight_ns`): until then the
//!   vector is still signalled for it, and an entry posted after the
//!   host's write, not covered by its head, is signalled when the doorbell
//!   arrives (the head is behind the tail); one posted after that, at once.
//! - With Interrupt Coalescing, a vector is signalled only when its
//!   unsignalled entries reach the Aggregation Threshold (THR, a 0's based
//!   count) or the oldest has waited the Aggregation Time (TIME, in 100 µs
//!   units); THR or TIME of 0 disables it. Linux's nvme driver leaves it
//!   disabled (the reset value); `--set
//!   /sys/class/nvme/nvmeN/blksim/interrupt_coalescing=THR,TIME` sets it.

use crate::ids::HctxId;

/// The Interrupt Coalescing feature's two fields, as the spec encodes them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Coalescing {
    /// Aggregation Threshold, 0's based: THR + 1 entries per interrupt.
    pub(crate) thr: u8,
    /// Aggregation Time, 100 µs units.
    pub(crate) time: u8,
}

impl Coalescing {
    /// Coalescing is on only when both fields are non-zero.
    fn enabled(self) -> bool {
        self.thr > 0 && self.time > 0
    }

    /// The longest a completion may wait for its interrupt, ns.
    fn time_ns(self) -> u64 {
        self.time as u64 * 100_000
    }
}

/// What the controller does about a vector after an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Send the vector's MSI now.
    Now,
    /// Nothing now; the aggregation timer of generation `gen` fires at `at_ns`.
    At { at_ns: u64, gen: u32 },
    /// Nothing: already signalled and not acknowledged, nothing to signal,
    /// or the timer is running.
    Hold,
}

/// One vector's interrupt state.
#[derive(Clone, Debug, Default)]
pub(crate) struct IrqVector {
    /// An interrupt was sent for entries the host has not acknowledged yet.
    signalled: bool,
    /// Entries posted and not yet signalled.
    unsignalled: u32,
    /// The aggregation timer runs (its current generation is `timer_gen`).
    timer_armed: bool,
    timer_gen: u32,
    /// The running handler's CQ head doorbell falls at this time.
    doorbell_at: Option<u64>,
    /// Entries posted before that doorbell: the handler's loop takes them.
    taken_late: u32,
    /// When the host's last CQ head doorbell reaches the controller.
    acked_at: u64,
    /// The armed timer waits for that doorbell (not the Aggregation Time).
    for_doorbell: bool,
}

impl IrqVector {
    /// The host's doorbell acknowledges every entry so far; it reaches the controller at `acked_at`.
    fn acknowledged(&mut self, acked_at: u64) {
        self.signalled = false;
        self.unsignalled = 0;
        self.acked_at = acked_at;
    }
}

/// Interrupt generation of every vector of a controller.
#[derive(Clone, Debug, Default)]
pub(crate) struct InterruptGen {
    vectors: Vec<IrqVector>,
    coalescing: Coalescing,
    /// A CQ head doorbell's flight from the CPU's write to the controller, ns.
    flight_ns: u64,
    /// MSIs sent.
    pub(crate) msis: u64,
}

impl InterruptGen {
    /// `nr` vectors (one per interrupt queue), with coalescing set as
    /// given; a CQ head doorbell reaches the controller `flight_ns` after
    /// the host writes it.
    pub(crate) fn new(nr: usize, coalescing: Coalescing, flight_ns: u64) -> InterruptGen {
        InterruptGen { vectors: vec![IrqVector::default(); nr], coalescing, flight_ns, msis: 0 }
    }

    /// A completion queue entry of `queue` reached host memory at `now`.
    #[inline(always)]
    pub(crate) fn cqe_posted(&mut self, queue: HctxId, now: u64) -> Signal {
        let v = &mut self.vectors[queue.idx()];
        if let Some(at) = v.doorbell_at {
            if now < at {
                v.taken_late += 1;
                return Signal::Hold;
            }
            // The doorbell went before this entry: it acknowledges all the
            // earlier ones when it reaches the controller.
            v.doorbell_at = None;
            v.acknowledged(at + self.flight_ns);
        }
        v.unsignalled += 1;
        self.decide(queue, now)
    }

    /// The host's handler, draining `queue` now, writes its CQ head
    /// doorbell at `at_ns`, having taken every entry posted before then.
    pub(crate) fn doorbell_due(&mut self, queue: HctxId, at_ns: u64) {
        let v = &mut self.vectors[queue.idx()];
        v.doorbell_at = Some(at_ns);
        v.taken_late = 0;
    }

    /// The handler's drain ended, its doorbell written (if no later entry
    /// has already found it so): every entry so far is acknowledged. Returns
    /// the entries its loop took beyond those it saw when it began.
    pub(crate) fn drain_ended(&mut self, queue: HctxId) -> u32 {
        let v = &mut self.vectors[queue.idx()];
        if let Some(at) = v.doorbell_at.take() {
            v.acknowledged(at + self.flight_ns);
        }
        std::mem::take(&mut v.taken_late)
    }

    /// The timer of `gen` fired for `queue` at `now`: the doorbell the
    /// vector waited for has reached the controller, or the Aggregation
    /// Time ran out.
    pub(crate) fn timer_fired(&mut self, queue: HctxId, gen: u32, now: u64) -> Signal {
        let v = &mut self.vectors[queue.idx()];
        if !v.timer_armed || v.timer_gen != gen {
            return Signal::Hold;
        }
        v.timer_armed = false;
        if v.signalled || v.unsignalled == 0 {
            return Signal::Hold;
        }
        if std::mem::take(&mut v.for_doorbell) {
            return self.decide(queue, now);
        }
        if now < v.acked_at {
            // The Aggregation Time ran out before the host's doorbell landed: signal as it lands.
            let at = v.acked_at;
            return self.arm(queue, at, false);
        }
        self.send(queue)
    }

    /// Signal now, wait for more entries, the doorbell or the timer, or hold.
    #[inline(always)]
    fn decide(&mut self, queue: HctxId, now: u64) -> Signal {
        let c = self.coalescing;
        let v = &mut self.vectors[queue.idx()];
        if v.signalled || v.unsignalled == 0 {
            return Signal::Hold;
        }
        if now < v.acked_at {
            // The controller has not seen the host's doorbell: the vector is
            // still signalled for it until then.
            let at = v.acked_at;
            return if v.timer_armed { Signal::Hold } else { self.arm(queue, at, true) };
        }
        if !c.enabled() || v.unsignalled > c.thr as u32 {
            return self.send(queue);
        }
        if v.timer_armed {
            return Signal::Hold;
        }
        self.arm(queue, now + c.time_ns(), false)
    }

    /// Arm the vector's timer at `at_ns` (for the doorbell, or the Aggregation Time).
    fn arm(&mut self, queue: HctxId, at_ns: u64, for_doorbell: bool) -> Signal {
        let v = &mut self.vectors[queue.idx()];
        v.timer_armed = true;
        v.for_doorbell = for_doorbell;
        v.timer_gen = v.timer_gen.wrapping_add(1);
        Signal::At { at_ns, gen: v.timer_gen }
    }

    fn send(&mut self, queue: HctxId) -> Signal {
        let v = &mut self.vectors[queue.idx()];
        v.signalled = true;
        v.unsignalled = 0;
        v.timer_armed = false;
        self.msis += 1;
        Signal::Now
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: HctxId = HctxId(0);

    #[test]
    fn a_burst_before_the_doorbell_gives_one_msi_and_entries_after_it_are_signalled_at_once() {
        let mut g = InterruptGen::new(1, Coalescing::default(), 0);
        assert_eq!(g.cqe_posted(Q, 0), Signal::Now);
        for t in 1..10 {
            assert_eq!(g.cqe_posted(Q, t), Signal::Hold, "the host is still on the first interrupt");
        }
        // The handler starts at 10 and will write the doorbell at 50.
        g.doorbell_due(Q, 50);
        assert_eq!(g.cqe_posted(Q, 20), Signal::Hold, "before the doorbell: the handler's loop takes it");
        assert_eq!(g.cqe_posted(Q, 60), Signal::Now, "after the doorbell, while the handler completes");
        assert_eq!(g.cqe_posted(Q, 61), Signal::Hold);
        assert_eq!(g.drain_ended(Q), 1, "the loop took the entry of time 20");
        // The next handler drains the two entries of 60 and 61; nothing comes before its doorbell.
        g.doorbell_due(Q, 100);
        assert_eq!(g.drain_ended(Q), 0);
        assert_eq!(g.cqe_posted(Q, 120), Signal::Now, "acknowledged: the next entry is signalled");
        assert_eq!(g.msis, 3);
    }

    #[test]
    fn aggregation_threshold_n_gives_one_msi_per_n_completions_under_load() {
        // THR = 3 (0's based): four entries per interrupt; TIME long enough never to fire.
        let mut g = InterruptGen::new(1, Coalescing { thr: 3, time: 255 }, 0);
        let mut msis = 0;
        for i in 0..40u64 {
            match g.cqe_posted(Q, i * 100) {
                Signal::Now => {
                    msis += 1;
                    g.doorbell_due(Q, i * 100 + 50);
                    assert_eq!(g.drain_ended(Q), 0);
                }
                Signal::At { .. } | Signal::Hold => {}
            }
        }
        assert_eq!(msis, 10);
    }

    #[test]
    fn aggregation_time_bounds_the_wait_at_low_load() {
        let mut g = InterruptGen::new(1, Coalescing { thr: 7, time: 2 }, 0);
        let Signal::At { at_ns, gen } = g.cqe_posted(Q, 1_000) else { panic!("a lone entry waits") };
        assert_eq!(at_ns, 1_000 + 200_000);
        assert_eq!(g.cqe_posted(Q, 5_000), Signal::Hold, "the timer already runs");
        assert_eq!(g.timer_fired(Q, gen, 300_000), Signal::Now);
        assert_eq!(g.timer_fired(Q, gen, 300_000), Signal::Hold, "a timer fires once");
        // A stale timer (the threshold was met first) does nothing.
        let mut g = InterruptGen::new(1, Coalescing { thr: 1, time: 2 }, 0);
        let Signal::At { gen, .. } = g.cqe_posted(Q, 0) else { panic!() };
        assert_eq!(g.cqe_posted(Q, 10), Signal::Now);
        assert_eq!(g.timer_fired(Q, gen, 300_000), Signal::Hold);
    }

    #[test]
    fn an_entry_posted_while_the_doorbell_flies_is_signalled_when_it_arrives() {
        // The handler writes its doorbell at 50; it reaches the controller at 450.
        let mut g = InterruptGen::new(1, Coalescing::default(), 400);
        assert_eq!(g.cqe_posted(Q, 0), Signal::Now);
        g.doorbell_due(Q, 50);
        assert_eq!(g.cqe_posted(Q, 20), Signal::Hold, "the handler's loop takes it");
        // Past the host's write, not covered by its head: signalled as the doorbell arrives.
        let Signal::At { at_ns, gen } = g.cqe_posted(Q, 100) else { panic!("waits for the doorbell") };
        assert_eq!(at_ns, 450);
        assert_eq!(g.cqe_posted(Q, 200), Signal::Hold, "one interrupt for both");
        assert_eq!(g.timer_fired(Q, gen, 450), Signal::Now);
        assert_eq!(g.drain_ended(Q), 1);
        // A drain with nothing after its doorbell: an entry once it has arrived is signalled at once,
        // one before waits for it.
        g.doorbell_due(Q, 1_000);
        assert_eq!(g.drain_ended(Q), 0);
        assert!(matches!(g.cqe_posted(Q, 1_200), Signal::At { at_ns: 1_400, .. }));
        let mut g = InterruptGen::new(1, Coalescing::default(), 400);
        assert_eq!(g.cqe_posted(Q, 0), Signal::Now);
        g.doorbell_due(Q, 50);
        assert_eq!(g.drain_ended(Q), 0);
        assert_eq!(g.cqe_posted(Q, 500), Signal::Now);
        assert_eq!(g.msis, 2);
    }

    #[test]
    fn an_aggregation_time_that_runs_out_while_the_doorbell_flies_signals_as_it_lands() {
        let mut g = InterruptGen::new(1, Coalescing { thr: 7, time: 1 }, 400);
        let Signal::At { gen, .. } = g.cqe_posted(Q, 0) else { panic!("a lone entry waits") };
        assert_eq!(g.timer_fired(Q, gen, 100_000), Signal::Now);
        // The handler's doorbell at 100,050 lands at 100,450; a new entry waits for it.
        g.doorbell_due(Q, 100_050);
        assert_eq!(g.drain_ended(Q), 0);
        let Signal::At { at_ns, gen } = g.cqe_posted(Q, 100_100) else { panic!() };
        assert_eq!(at_ns, 100_450, "the doorbell first");
        // Landed: one entry is under the threshold, so the Aggregation Time runs from there.
        let Signal::At { at_ns, gen } = g.timer_fired(Q, gen, 100_450) else { panic!() };
        assert_eq!(at_ns, 200_450);
        assert_eq!(g.timer_fired(Q, gen, 200_450), Signal::Now);
        assert_eq!(g.msis, 2);
    }
}
