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
    (
        required { $($(#[doc = $doc:literal])* $name:ident,)* }
        optional { $($(#[doc = $odoc:literal])* $oname:ident,)* }
    ) => {
        /// Every cost the model charges, ns. The optional ones belong to
        /// hardware only some machines have (a SCSI host adapter): a driver
        /// that needs one reports its absence when it probes.
        #[derive(Clone, Debug, PartialEq)]
        pub struct Costs {
            $($(#[doc = $doc])* pub $name: u64,)*
            $($(#[doc = $odoc])* pub $oname: Option<u64>,)*
            /// The profile's entries, for display (ranges and notes).
            pub table: BTreeMap<String, Cost>,
        }

        impl Costs {
            /// Every cost's name, in table order (the optional ones last).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name),)* $(stringify!($oname),)*];

            /// Resolve from a profile's `[costs]` table: every required cost present, all in range, nothing unknown.
            pub fn from_table(table: &BTreeMap<String, Cost>) -> Result<Costs, String> {
                for (k, c) in table {
                    if !Self::NAMES.contains(&k.as_str()) {
                        return Err(format!("costs: unknown cost '{k}' (known: {})", Self::NAMES.join(", ")));
                    }
                    c.check(&format!("costs.{k}"))?;
                }
                let get = |k: &str| table.get(k).map(|c| c.ns).ok_or_else(|| format!("costs: missing cost '{k}'"));
                Ok(Costs {
                    $($name: get(stringify!($name))?,)*
                    $($oname: table.get(stringify!($oname)).map(|c| c.ns),)*
                    table: table.clone(),
                })
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
                    $(stringify!($oname) => self.$oname = Some(ns),)*
                    _ => unreachable!(),
                }
                Ok(())
            }

            /// An optional cost a device needs: its value, or an error naming it and the device.
            pub fn need(&self, value: Option<u64>, name: &str, device: &str) -> Result<u64, String> {
                value.ok_or_else(|| format!("device '{device}' needs costs.{name} in the machine profile"))
            }
        }
    };
}

costs! {
    required {
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
    /// fio's td_io_commit around one submitting call: depth histogram, the engine's commit wrapper (user).
    fio_submit_call_ns,
    /// fio's io_u_queued_complete around one reaping call: the completion batch's bookkeeping (user).
    fio_reap_call_ns,
    /// The user working set refilled after the task slept: cache and TLB misses (user).
    user_wake_ns,
    /// fio's md5 (`lib/md5.c`) over one KiB, the unit its other checksums are measured against (user).
    fio_md5_ns_per_kib,
    /// fio filling one KiB of a write buffer with random data for verify (`fill_random_buf`, user).
    fio_fill_random_ns_per_kib,
    /// One x86 PAUSE (`rep; nop`, fio's `nop`): an iteration of fio's `cycles_spin` loop (`thinkcycles`, user).
    pause_ns,
    /// t/io_uring filling one SQE (user).
    tio_prep_ns,
    /// t/io_uring reaping one CQE (user).
    tio_reap_ns,
    /// One round of t/io_uring's submitter loop: prep, enter and reap calls, statistics (user).
    tio_round_ns,
    /// io_submit per iocb.
    aio_submit_ns,
    /// aio_complete per request (in the completing context).
    aio_complete_ns,
    /// io_getevents per event returned.
    aio_getevents_ns,
    /// fsync(2)/fdatasync(2) of a block device with nothing to write back
    /// and no volatile write cache, past the syscall entry (`blkdev_fsync`).
    blkdev_fsync_ns,
    /// glibc aio_read/aio_write: `__aio_enqueue_request` under `__aio_requests_mutex` (user).
    glibc_aio_enqueue_ns,
    /// fio's posixaio getevents per io_u it walks: `io_u_qiter` and `aio_error` (user).
    glibc_aio_error_ns,
    /// glibc aio_suspend's work around its futex wait: the wait list set up and taken down under the mutex (user).
    glibc_aio_suspend_ns,
    /// glibc's AIO helper after each pread/pwrite: the result stored, `__aio_notify`, the request dequeued and freed, the next taken (user).
    glibc_aio_done_ns,
    /// A futex syscall's body besides the syscall: the hash bucket, queueing the waiter or the wake list.
    futex_ns,
    /// pthread_create: the stack, clone3, wake_up_new_task (glibc's AIO helper, created at the first request).
    thread_create_ns,
    /// fio's offload workqueue per io_u handed over: `workqueue_enqueue` (the worker's lock, list add, seq, a condition signal without a waiter) or the worker's splice of its list (user).
    fio_workqueue_ns,
    /// io_uring_enter once per call besides the syscall: ring lookup, uring_lock, submit state, CQ wait/poll entry.
    io_uring_enter_ns,
    /// io_uring per SQE: request alloc, SQE read, init, fixed-file lookup, issue.
    io_uring_sqe_ns,
    /// io_uring per read/write SQE: io_prep_rw, buffer import, rw_init_file, rw_verify_area.
    io_uring_rw_ns,
    /// io_uring per IORING_OP_URING_CMD SQE: io_uring_cmd_prep (the command copied), io_uring_cmd.
    uring_cmd_prep_ns,
    /// nvme_uring_cmd_io per command: the NVMe command from the SQE, nvme_cmd_allowed, the request, the user buffer mapped.
    nvme_uring_cmd_ns,
    /// io_uring per completion posted: rw cleanup, CQE fill, request freed to the cache.
    io_uring_cqe_ns,
    /// io_uring once per batch of CQEs posted (__io_submit_flush_completions: CQ lock, commit, wake check).
    io_uring_flush_ns,
    /// io_uring: an interrupt-driven completion queued as task_work (io_req_local_work_add), in the completing context.
    io_uring_tw_add_ns,
    /// io_uring: running one completion's task_work in the task (io_req_rw_complete).
    io_uring_tw_run_ns,
    /// SQPOLL: one iteration of the SQ thread's loop besides its work (io_sq_thread bookkeeping, getrusage, the ring list).
    sqpoll_iter_ns,
    /// fget/fput per I/O without registered files.
    fget_fput_ns,
    /// lseek(2) on a block device besides the syscall and its fd lookup: blkdev_llseek's inode lock and fixed_size_llseek.
    llseek_ns,
    /// Pinning + unpinning one user page per I/O without fixed buffers.
    page_pin_ns,
    /// The unplugged submit_bio path of sync and libaio direct I/O: bio from the bioset, blk_mq_submit_bio, one tag, issue.
    bio_submit_ns,
    /// Direct I/O's bio for an async iocb (io_uring, libaio): __blkdev_direct_IO_async, bio from the per-CPU cache, submit_bio.
    dio_bio_ns,
    /// Marking a read's user pages dirty (bio_set_pages_dirty, bio_check_pages_dirty) without fixed buffers.
    dio_dirty_ns,
    /// blk_mq_submit_bio per bio: split check, plug merge attempt, bio to request, add to the plug.
    blk_submit_ns,
    /// blk_mq_rq_ctx_init per request.
    blk_rq_init_ns,
    /// I/O accounting per request (iostats=1): blk_account_io_start and _done.
    blk_iostat_ns,
    /// A plug's batch of requests and tags (__blk_mq_alloc_requests_batch), once per fill.
    blk_tag_batch_ns,
    /// One request and tag allocated alone (no cached request for its queue).
    blk_mq_get_tag_ns,
    /// A plug's cached request left unused, freed at the plug's end.
    blk_free_rq_ns,
    /// A plug: blk_start_plug, blk_finish_plug, the flush's setup.
    blk_plug_ns,
    /// A plug flush with several queues, per queue (blk_mq_dispatch_plug_list: filter, hctx->dispatch in and out under hctx->lock, run).
    blk_plug_queue_ns,
    /// One request dispatched outside queue_rqs (blk_mq_dispatch_rq_list / blk_mq_request_issue_directly: budget, the ->queue_rq call).
    blk_issue_direct_ns,
    /// nvme_queue_rq per request.
    nvme_queue_rq_ns,
    /// nvme_queue_rqs per request of a plugged batch (SQEs copied under one sq_lock).
    nvme_queue_rqs_ns,
    /// nvme_queue_rqs once per queue of a batch: sq_lock, the SQ tail update besides the doorbell's write.
    nvme_sq_batch_ns,
    /// null_blk's queue_rq per request.
    null_queue_rq_ns,
    /// DMA map + unmap per request through the IOMMU (translated DMA).
    dma_map_ns,
    /// DMA map + unmap per request without translation (iommu=pt, no IOMMU): dma-direct.
    dma_direct_ns,
    /// One IOTLB invalidation an unmap waits for (iommu.strict=1): the IOMMU unit's time for it, with its
    /// wait descriptor (the unit's invalidation queue takes one at a time).
    iotlb_sync_ns,
    /// A pre-mapped fixed buffer's DMA address looked up per request (`--patch dma-premap`).
    dma_premap_ns,
    /// SQ tail doorbell write, once per batch.
    doorbell_ns,
    /// Interrupt entry up to the handler.
    irq_entry_ns,
    /// Interrupt exit without softirq work.
    irq_exit_ns,
    /// One local APIC EOI.
    apic_eoi_ns,
    /// One PIR harvest in the notification handler that finds vectors: read 4 words, xchg the non-zero ones.
    pir_harvest_ns,
    /// One PIR harvest that finds none: the 4 words read, nothing exchanged.
    pir_scan_ns,
    /// A device vector's flow handler (`vector_irq` lookup, `handle_edge_irq`): once per
    /// remapped interrupt, once per demultiplexed vector of a posted notification; system
    /// vectors (IPIs, the local timer, the posted-MSI notification itself) have none.
    irq_flow_ns,
    /// Masking a device's MSI-X vector (`pci_msix_mask`): the vector control write and the read that flushes it.
    msix_mask_ns,
    /// Unmasking a device's MSI-X vector (`pci_msix_unmask`): the vector control write, posted.
    msix_unmask_ns,
    /// Arming an hrtimer on the local CPU (`hrtimer_start_range_ns`).
    hrtimer_start_ns,
    /// GSIM's hook after a device IRQ's handler (`irq_start_moderation`): counting, the epoch check, and
    /// the IRQ put on the CPU's moderated list when it moderates (`--patch gsim`).
    gsim_hook_ns,
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
    /// blk_mq_end_request_batch once per batch: one timestamp, tags freed per queue.
    blk_end_batch_ns,
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
    /// One poll call from io_do_iopoll (bio_poll → blk_mq_poll → nvme_poll / null_poll).
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
    /// io_uring `io_queue_iowq` of a REQ_F_FORCE_ASYNC request (IORING_OP_FSYNC): `io_prep_async_link`,
    /// `io_wq_enqueue` (the work on the acct list under its lock), `io_wq_activate_free_worker` finding the idle worker.
    io_wq_enqueue_ns,
    /// An io-wq worker running one work item: `io_worker_handle_work` (acct lock, `io_get_next_work`,
    /// `io_assign_current_work`), `io_wq_submit_work` → `io_issue_sqe`, besides the operation itself.
    io_wq_work_ns,
    /// Kyber `kyber_bio_merge`: `blk_bio_list_merge` over the CPU's kcq list, under `kcq->lock`.
    kyber_merge_ns,
    /// Kyber inserting one request on its CPU's kcq (list add, `sbitmap_set_bit` of `kcq_map`), under `kcq->lock`.
    kyber_insert_ns,
    /// Kyber `kyber_dispatch_request`, under `khd->lock`: the domain's batch, a domain token (`__sbitmap_queue_get`), the request.
    kyber_dispatch_ns,
    /// Kyber `completed_request` (two latency-histogram increments, `timer_reduce`) and `finish_request` (the token's `sbitmap_queue_clear`).
    kyber_complete_ns,
    /// Cache lines of Kyber's `kyber_hctx_data` and domain tokens a dispatch writes besides `khd->lock` (a count, not ns).
    kyber_lock_data_lines,
    }
    optional {
    /// SCSI: `scsi_queue_rq` with the upper driver's command setup (`sd_init_command`), per request.
    scsi_queue_rq_ns,
    /// SCSI: the host adapter driver's `queuecommand` (IOCB build, request ring, host lock), per command.
    hba_queuecommand_ns,
    /// SCSI: the host adapter's interrupt handler per pass (status register reads, response-ring pointers).
    hba_irq_ns,
    /// SCSI: the interrupt handler per completed command (status entry, command lookup, `scsi_done`).
    hba_cqe_ns,
    /// SCSI: `scsi_softirq_done` → `scsi_io_completion` per request, besides `blk_complete_ns`.
    scsi_complete_ns,
    /// SCSI: cache lines of a command's state (`scsi_cmnd`, request, the adapter's command slot) that
    /// move when the next stage (issue, interrupt, completion) runs on another CPU (a count).
    scsi_cmd_lines,
    /// SCSI: cache lines of the submitter's side of an I/O (bio, bio_vec, direct-I/O state) that the
    /// completion touches, and the woken task touches again after it (a count).
    scsi_bio_lines,
    /// Cache lines a wake-up writes in another CPU's run queue and the task (a count).
    wake_remote_lines,
    /// A miss to another NUMA node's memory beyond a local one: the adapter's rings touched from another cell.
    numa_remote_ns,
    }
}
