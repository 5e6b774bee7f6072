//! The cost table: what each kernel or hardware operation costs, in ns, with
//! the range published measurements support and a note on the source.

use std::collections::BTreeMap;

use serde::Deserialize;

/// One cost as a profile writes it: `{ ns = 120, min = 34, max = 400, note = "..." }`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cost {
    /// The value the model charges, ns.
    pub ns: u64,
    /// The lowest value published measurements support, ns.
    pub min: u64,
    /// The highest value published measurements support, ns.
    pub max: u64,
    /// Where the value and its range come from.
    pub note: String,
}

impl Cost {
    /// An error naming `what` unless `min <= ns <= max`.
    pub fn check(&self, what: &str) -> Result<(), String> {
        if self.min > self.max || self.ns < self.min || self.ns > self.max {
            return Err(format!("{what} = {} ns is outside its range {}..{} ns", self.ns, self.min, self.max));
        }
        Ok(())
    }
}

macro_rules! costs {
    ($($(#[doc = $doc:literal])* $name:ident,)*) => {
        /// Every cost the model charges, ns.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Costs {
            $($(#[doc = $doc])* pub $name: u64,)*
            /// The profile's entries, for display (ranges and notes).
            pub table: BTreeMap<String, Cost>,
        }

        impl Costs {
            /// Every cost's name, in table order.
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name),)*];

            /// Resolve from a profile's `[costs]` table: every cost present, in range, nothing unknown.
            pub fn from_table(table: &BTreeMap<String, Cost>) -> Result<Costs, String> {
                for (k, c) in table {
                    if !Self::NAMES.contains(&k.as_str()) {
                        return Err(format!("costs: unknown cost '{k}' (known: {})", Self::NAMES.join(", ")));
                    }
                    c.check(&format!("costs.{k}"))?;
                }
                let get = |k: &str| table.get(k).map(|c| c.ns).ok_or_else(|| format!("costs: missing cost '{k}'"));
                Ok(Costs { $($name: get(stringify!($name))?,)* table: table.clone() })
            }

            /// Set one cost by name (calibration and `--set`-style overrides), keeping it in range.
            pub fn set(&mut self, name: &str, ns: u64) -> Result<(), String> {
                let entry = self.table.get_mut(name).ok_or_else(|| format!("unknown cost '{name}'"))?;
                let mut c = entry.clone();
                c.ns = ns;
                c.check(&format!("costs.{name}"))?;
                *entry = c;
                match name {
                    $(stringify!($name) => self.$name = ns,)*
                    _ => unreachable!(),
                }
                Ok(())
            }
        }
    };
}

costs! {
    /// Syscall entry + exit with the platform's mitigations.
    syscall_ns,
    /// schedule() switching a task out or in (charged once each way).
    context_switch_ns,
    /// try_to_wake_up on the waker's CPU.
    wakeup_ns,
    /// fio preparing one io_u (user).
    fio_prep_ns,
    /// fio accounting one completed io_u (user).
    fio_reap_ns,
    /// One clock_gettime (user).
    fio_clock_ns,
    /// t/io_uring filling one SQE (user).
    tio_prep_ns,
    /// t/io_uring reaping one CQE (user).
    tio_reap_ns,
    /// io_submit per iocb.
    aio_submit_ns,
    /// aio_complete per request (in the completing context).
    aio_complete_ns,
    /// io_getevents per event returned.
    aio_getevents_ns,
    /// io_uring per-SQE preparation.
    io_uring_sqe_ns,
    /// io_uring per-completion task_work + CQE post.
    io_uring_cqe_ns,
    /// fget/fput per I/O without registered files.
    fget_fput_ns,
    /// Pinning + unpinning one user page per I/O without fixed buffers.
    page_pin_ns,
    /// bio allocation and blk_mq_submit_bio up to the driver.
    bio_submit_ns,
    /// bio + request for one I/O of a plugged batch (per-CPU bio cache, plug's cached requests).
    bio_submit_plugged_ns,
    /// nvme_queue_rq per request.
    nvme_queue_rq_ns,
    /// nvme_queue_rqs per request of a plugged batch (SQEs copied under one sq_lock).
    nvme_queue_rqs_ns,
    /// null_blk's queue_rq per request.
    null_queue_rq_ns,
    /// DMA map + unmap per request.
    dma_map_ns,
    /// SQ tail doorbell write, once per batch.
    doorbell_ns,
    /// Interrupt entry up to the handler.
    irq_entry_ns,
    /// Interrupt exit without softirq work.
    irq_exit_ns,
    /// One local APIC EOI.
    apic_eoi_ns,
    /// One PIR harvest in the notification handler: read 4 words, xchg the non-zero ones.
    pir_harvest_ns,
    /// Running one demultiplexed vector's flow handler (vector_irq lookup, handle_edge_irq).
    posted_msi_demux_ns,
    /// A DSA client handing one descriptor to a work queue (MOVDIR64B/ENQCMD).
    dsa_submit_ns,
    /// The DSA interrupt handler per completion: completion record, client callback.
    dsa_complete_ns,
    /// nvme_irq / nvme_poll per CQE.
    nvme_cqe_ns,
    /// CQ head doorbell write, once per drain.
    cq_doorbell_ns,
    /// Ending one request (blk_mq_end_request).
    blk_complete_ns,
    /// Ending one request inside a batch (blk_mq_end_request_batch).
    blk_complete_batch_ns,
    /// Sending one IPI.
    ipi_send_ns,
    /// IPI flight time.
    ipi_latency_ns,
    /// Device MSI to the CPU, one way (latency, not CPU time).
    msi_latency_ns,
    /// Softirq processing entry/exit.
    softirq_entry_ns,
    /// Adding a request to a remote CPU's blk_cpu_done list.
    llist_add_ns,
    /// One poll of a CQ (phase-bit check).
    poll_ns,
    /// One cache-line transfer between cores of a socket (same last-level cache).
    cacheline_transfer_ns,
    /// One cache-line transfer between cores of different last-level caches (e.g. CCDs).
    cacheline_transfer_llc_ns,
    /// mq-deadline `dd_bio_merge` lookup, under `dd->lock`.
    dd_merge_ns,
    /// Cache lines of mq-deadline's state a `dd->lock` section touches (a
    /// count, not ns): they move to the holder's core when the last section ran on another.
    dd_lock_data_lines,
    /// mq-deadline inserting one request (rb-tree, hash, FIFO), under `dd->lock`.
    dd_insert_ns,
    /// mq-deadline `dd_dispatch_request`, under `dd->lock`.
    dd_dispatch_ns,
    /// 2024 series: one per-CPU insertion bucket: adding a task's requests to it, or draining it under `dd->lock`.
    dd_bucket_ns,
    /// kblockd: `process_one_work` running one work item (a queue run), besides the run itself.
    kblockd_work_ns,
}
