//! Kernel path: the NVMe PCI driver's I/O path. `nvme_queue_rq` /
//! `nvme_queue_rqs` → SQ entries and one SQ doorbell → the controller
//! (`controller.rs`); `nvme_irq` → `nvme_poll_cq` (every CQE that shows
//! before its doorbell; requests that do not batch complete here through
//! `blk_mq_complete_request`) → the CQ head doorbell →
//! `nvme_pci_complete_batch` for the ones in its `io_comp_batch`.

use crate::block::{Foresight, Placement};
use crate::drivers::Drain;
use crate::fio::job::JobState;
use crate::hw::cpu::Bill;
use crate::ids::{CpuId, DevId, HctxId, ReqId};
use crate::stats::CpuStage;
use crate::system::{Event, Sim};

impl Sim {
    /// The driver rang the SQ doorbell of `hctx` with `reqs`: the device takes them.
    #[inline(always)]
    pub(crate) fn nvme_issue(&mut self, dev: DevId, hctx: HctxId, reqs: &[ReqId]) {
        let now = self.q.now_ns();
        for &req in reqs {
            let r = &mut self.reqs.reqs[req];
            r.t_dispatch_ns = now;
            let (dir, bytes, ranges) = (r.dir, r.dev_bytes as u64, r.ranges as u32);
            let passthru = self.devs[dev].passthru_users && self.is_passthru(req);
            let d = &mut self.devs[dev];
            if !passthru {
                // blk_account_io_start: passthrough is not in the disk's statistics
                // (iostats_passthrough is off by default).
                d.account_start(now);
            }
            if let Some(t) = self.trace.as_mut() {
                t.queue_depth(dev.0, now, d.disk.inflight);
            }
            let nvme = d.nvme_mut();
            let upstream = nvme.params.pcie_switch.map(|s| &mut self.hw.pcie_switches[s]);
            let done = if dir == crate::workload::Direction::Trim {
                // Dataset Management: its ranges, the merged bios' included.
                nvme.deallocate(now, ranges)
            } else {
                nvme.service(now, dir, bytes, upstream)
            };
            debug_assert_eq!(self.reqs.reqs[req].hctx, hctx);
            self.q.at(done, Event::CqeSent { dev, req });
        }
    }

    /// `nvme_irq` → `nvme_poll_cq` over the first `n` CQEs of `queue` on
    /// `cpu`, in one of two passes over the same code: `RUN = false`
    /// foresees it (nothing changes; the handler's step is charged this
    /// cost before it runs, and its doorbell is due when the drain part is
    /// done: `Drain::tail_ns` before the end), `RUN = true` does it at the
    /// step's end: the CQEs are consumed, with those the loop took as they
    /// came before its doorbell (their work charged as follow-on), and each
    /// request is completed where `rq_affinity` places it
    /// (`nvme_pci_complete_batch` for the batched ones, after the doorbell).
    #[inline(always)]
    pub(crate) fn nvme_poll_cq<const RUN: bool>(&mut self, cpu: CpuId, dev: DevId, queue: HctxId, n: u32) -> Drain {
        let cqe_ns = self.costs.nvme_cqe_ns;
        if RUN {
            let late = self.devs[dev].nvme_mut().irq.drain_ended(queue);
            let mut taken = Drain::default();
            if late > 0 {
                taken = self.drain_cq::<false, true>(cpu, dev, queue, n, n + late, |_, _| cqe_ns);
            }
            let mut d = self.drain_cq::<true, true>(cpu, dev, queue, 0, n + late, |_, _| cqe_ns);
            d.follow_ns += taken.cost_ns - taken.follow_ns;
            return d;
        }
        let mut d = self.drain_cq::<false, true>(cpu, dev, queue, 0, n, |_, _| cqe_ns);
        // Strict unmaps wait for their IOTLB invalidations (DMA mapping's
        // time, not the handler's), from now: the step is charged up front.
        let unmap = self.iotlb_sync(dev, queue, n, self.q.now_ns(), cqe_ns);
        d.cost_ns += d.bill.add(CpuStage::DmaMap, unmap);
        d
    }

    /// A device interrupt handler's drain of completions `from..to` of
    /// `queue` (a run takes `0..to`), each costing `cqe_cost` to take off
    /// the queue and then completed where `rq_affinity` places it; foreseen
    /// or run as `nvme_poll_cq` says. With `IOB` the requests
    /// `blk_mq_add_to_batch` takes complete after the doorbell, in the
    /// pass's `io_comp_batch` (NVMe's `nvme_pci_complete_batch`): their
    /// work is the drain's `tail_ns`.
    #[inline(always)]
    pub(crate) fn drain_cq<const RUN: bool, const IOB: bool>(
        &mut self,
        cpu: CpuId,
        dev: DevId,
        queue: HctxId,
        from: u32,
        to: u32,
        cqe_cost: impl Fn(&Sim, ReqId) -> u64,
    ) -> Drain {
        debug_assert!(!RUN || from == 0);
        let mut foresight = std::mem::take(&mut self.cpus[cpu].foresight);
        foresight.clear();
        let (mut cost, mut follow, mut tail) = (0, 0, 0);
        let mut batched = false;
        let mut bill = Bill::default();
        for i in from as usize..to as usize {
            let cq = &mut self.devs[dev].queues[queue].cq;
            let req = if RUN { cq.pop_front().expect("CQE") } else { cq[i] };
            if !RUN {
                cost += bill.add(CpuStage::DriverComplete, cqe_cost(self, req));
            }
            let c = &self.costs;
            let placement = self.placement(cpu, req);
            match placement {
                // blk_mq_complete_request_remote is false: complete here,
                // in an io_comp_batch (or one by one with a scheduler).
                Placement::Batched | Placement::Inline => {
                    if RUN {
                        follow += self.end_request(cpu, req);
                    } else {
                        let work = bill.add(CpuStage::Block, c.blk_complete_batch_ns)
                            + bill.add(CpuStage::UringComplete, self.engine_complete_cost(req));
                        let wake = self.foreseen_wake_ns(cpu, req, &mut foresight);
                        cost += work;
                        follow += wake;
                        if IOB && placement == Placement::Batched {
                            // blk_mq_end_request_batch once for the pass's batch.
                            if !std::mem::replace(&mut batched, true) {
                                tail = bill.add(CpuStage::Block, self.costs.blk_end_batch_ns);
                                cost += tail;
                            }
                            tail += work + wake;
                        }
                    }
                }
                // blk_mq_complete_send_ipi: onto the submitter's blk_cpu_done,
                // with an IPI when the list was empty.
                Placement::Remote => {
                    let target = self.reqs.reqs[req].submit_cpu;
                    if RUN {
                        let list = &mut self.cpus[target].done_list;
                        list.push_back(req);
                        if list.len() == 1 {
                            self.ipi_send(target);
                            follow += self.costs.ipi_send_ns;
                        }
                    } else {
                        cost += bill.add(CpuStage::Softirq, c.llist_add_ns);
                        if self.cpus[target].done_list.is_empty() && !foresight.ipis.contains(&target) {
                            foresight.ipis.push(target);
                            follow += c.ipi_send_ns;
                        }
                    }
                }
                // blk_mq_raise_softirq: this CPU's blk_cpu_done, BLOCK_SOFTIRQ at irq exit.
                Placement::LocalSoftirq => {
                    if RUN {
                        let c = &mut self.cpus[cpu];
                        c.done_list.push_back(req);
                        c.softirq_pending = true;
                    } else {
                        cost += bill.add(CpuStage::Softirq, c.llist_add_ns);
                    }
                }
            }
        }
        self.cpus[cpu].foresight = foresight;
        if !RUN {
            bill.add(CpuStage::Wakeup, follow);
        }
        Drain { cost_ns: cost + follow, follow_ns: follow, bill, tail_ns: tail }
    }

    /// The waker's cost if completing `req` here wakes its task (the first
    /// completion that meets what the sleeping task waits for), counting
    /// the completions foreseen so far in this pass.
    pub(crate) fn foreseen_wake_ns(&self, cpu: CpuId, req: ReqId, foresight: &mut Foresight) -> u64 {
        let r = &self.reqs.reqs[req];
        let j = r.job();
        let job = &self.jobs[j];
        if job.task.state != JobState::Sleeping || job.task.tag_blocked || r.polled {
            return 0;
        }
        let i = match foresight.wakes.iter().position(|&(w, _)| w == j) {
            Some(i) => i,
            None => {
                let have =
                    if job.is_uring() { job.engine.ring.tw_pending.len() } else { job.engine.ready.len() } as u32;
                foresight.wakes.push((j, have));
                foresight.wakes.len() - 1
            }
        };
        foresight.wakes[i].1 += 1;
        if foresight.wakes[i].1 == job.task.wait_for {
            let target = job.task.cpu;
            self.costs.wakeup_ns + if target != cpu && !self.cpus[target].busy() { self.costs.ipi_send_ns } else { 0 }
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::block::{Owner, Placement};
    use crate::fio::job::JobState;
    use crate::hw::cpu::Running;
    use crate::ids::{CpuId, DevId, HctxId, JobId, ReqId};
    use crate::machine::{load_profile, Builtins};
    use crate::settings::Settings;
    use crate::system::Sim;
    use crate::workload::{IoEngine, JobConfig};

    /// 4 CPUs in two LLCs (0-1, 2-3), nvme0n1 with one queue per CPU (or
    /// one queue in all with `one_queue`); one libaio job per CPU.
    fn sim(one_queue: bool, writes: &[&str]) -> Sim {
        let extra = if one_queue { "[device_model.pm1743]\nmax_queues = 1\n" } else { "" };
        let text = format!(
            "name = \"t\"\ndescription = \"t\"\nextends = \"spr-gen5\"\n[cpu]\ncores_per_socket = 4\nthreads_per_core = 1\nllc_per_socket = 2\n{extra}"
        );
        let m = load_profile(&text, "t", &Builtins).unwrap();
        let mut s = Settings::default();
        for w in writes {
            s.apply_write(w, &["nvme0n1".into()]).unwrap();
        }
        let jobs: Vec<JobConfig> = (0..4)
            .map(|c| {
                let mut j = JobConfig::new(&format!("j{c}"));
                j.ioengine = IoEngine::Libaio;
                j.direct = true;
                j.filenames = vec!["/dev/nvme0n1".into()];
                j.cpus_allowed = Some(vec![c]);
                j.runtime_ns = Some(1_000_000);
                j.time_based = true;
                j
            })
            .collect();
        Sim::build(&m, &s, &jobs, 1).unwrap()
    }

    /// Job `j` (on CPU j) sleeps in io_getevents until `wait_for` completions.
    fn sleeping(s: &mut Sim, j: u32, wait_for: u32) {
        let job = &mut s.jobs[JobId(j)];
        job.task.state = JobState::Sleeping;
        job.task.wait_for = wait_for;
        job.inflight = 8;
    }

    /// A CQE on `hctx` of nvme0n1 for a read job `j` submitted.
    fn cqe(s: &mut Sim, j: u32, hctx: u16) -> ReqId {
        let req = s.reqs.alloc();
        let r = &mut s.reqs.reqs[req];
        r.owner = Owner::Job(JobId(j));
        r.dev = Some(DevId(0));
        r.hctx = HctxId(hctx);
        r.submit_cpu = s.jobs[JobId(j)].task.cpu;
        let q = &mut s.devs[DevId(0)].queues[HctxId(hctx)];
        q.cq.push_back(req);
        q.busy += 1; // its tag, as blk_mq_get_tag would have counted it
        s.devs[DevId(0)].disk.inflight += 1;
        req
    }

    /// nvme_poll_cq on CPU 0 over queue `hctx`: the foreseen pass, then the
    /// run; their follow-on costs must agree and the queue end empty.
    fn foresee_then_run(s: &mut Sim, hctx: u16) -> (u64, u64) {
        let n = s.devs[DevId(0)].queues[HctxId(hctx)].cq.len() as u32;
        let foreseen = s.nvme_poll_cq::<false>(CpuId(0), DevId(0), HctxId(hctx), n);
        let (cost, foreseen) = (foreseen.cost_ns, foreseen.follow_ns);
        let actual = s.nvme_poll_cq::<true>(CpuId(0), DevId(0), HctxId(hctx), n).follow_ns;
        assert_eq!(foreseen, actual, "the foreseen follow-on work is what the run caused");
        assert!(s.devs[DevId(0)].queues[HctxId(hctx)].cq.is_empty());
        (cost, actual)
    }

    #[test]
    fn batched_completion_wakes_the_task_once_it_has_what_it_waits_for() {
        let mut s = sim(false, &[]);
        sleeping(&mut s, 0, 2);
        let reqs = [cqe(&mut s, 0, 0), cqe(&mut s, 0, 0), cqe(&mut s, 0, 0)];
        assert_eq!(s.placement(CpuId(0), reqs[0]), Placement::Batched);
        let c = s.costs.clone();
        let (cost, follow) = foresee_then_run(&mut s, 0);
        // The second completion wakes the job, on this CPU (no IPI).
        assert_eq!(follow, c.wakeup_ns);
        assert_eq!(
            cost,
            3 * (c.nvme_cqe_ns + c.blk_complete_batch_ns + c.aio_complete_ns) + c.blk_end_batch_ns + follow
        );
    }

    #[test]
    fn waking_a_task_on_an_idle_cpu_elsewhere_costs_an_ipi_and_on_a_busy_one_does_not() {
        for busy in [false, true] {
            // rq_affinity=0: completions stay on CPU 0 whoever submitted them.
            let mut s = sim(false, &["/sys/block/nvme0n1/queue/rq_affinity=0"]);
            sleeping(&mut s, 1, 1);
            if busy {
                s.cpus[CpuId(1)].running = Running::Task(JobId(0));
            }
            let req = cqe(&mut s, 1, 1);
            assert_eq!(s.placement(CpuId(0), req), Placement::Batched);
            let c = s.costs.clone();
            let (_, follow) = foresee_then_run(&mut s, 1);
            assert_eq!(follow, c.wakeup_ns + if busy { 0 } else { c.ipi_send_ns }, "busy: {busy}");
        }
    }

    #[test]
    fn remote_completions_send_one_ipi_per_cpu_whose_list_was_empty() {
        // CPU 2 shares no LLC with CPU 0: rq_affinity=1 sends its completions home.
        let mut s = sim(false, &[]);
        let reqs = [cqe(&mut s, 2, 0), cqe(&mut s, 2, 0), cqe(&mut s, 3, 0)];
        assert_eq!(s.placement(CpuId(0), reqs[0]), Placement::Remote);
        let c = s.costs.clone();
        let (cost, follow) = foresee_then_run(&mut s, 0);
        assert_eq!(follow, 2 * c.ipi_send_ns, "one IPI to CPU 2, one to CPU 3");
        assert_eq!(cost, 3 * (c.nvme_cqe_ns + c.llist_add_ns) + follow);
        assert_eq!(s.cpus[CpuId(2)].done_list.len(), 2);
        // A list that is not empty already has its IPI on the way: none more.
        cqe(&mut s, 2, 0);
        assert_eq!(foresee_then_run(&mut s, 0).1, 0);
    }

    #[test]
    fn a_scheduler_completes_inline_and_a_single_queue_raises_block_softirq() {
        let mut s = sim(false, &["/sys/block/nvme0n1/queue/scheduler=mq-deadline"]);
        sleeping(&mut s, 0, 1);
        let req = cqe(&mut s, 0, 0);
        assert_eq!(s.placement(CpuId(0), req), Placement::Inline);
        assert_eq!(foresee_then_run(&mut s, 0).1, s.costs.wakeup_ns);

        let mut s = sim(true, &["/sys/block/nvme0n1/queue/rq_affinity=0"]);
        let req = cqe(&mut s, 3, 0);
        assert_eq!(s.placement(CpuId(0), req), Placement::LocalSoftirq);
        let c = s.costs.clone();
        assert_eq!(foresee_then_run(&mut s, 0), (c.nvme_cqe_ns + c.llist_add_ns, 0));
        assert!(s.cpus[CpuId(0)].softirq_pending && s.cpus[CpuId(0)].done_list.len() == 1);
    }
}
