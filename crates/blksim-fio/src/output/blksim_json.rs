//! The extra top-level `blksim` object of the JSON output: what fio cannot
//! see (CPU time by context, interrupts, IPIs, devices, simulation counters, what fio's terse
//! line prints that its JSON does not carry),
//! then the caller's `extra` keys (resolved machine, settings, wall time).

use blksim::stats::{CpuTime, RunReport};
use serde_json::{json, Map, Value};

use super::json_print::float;

pub fn object(report: &RunReport, terse: Value, extra: Value) -> Map<String, Value> {
    let mut obj = Map::new();
    // The CPUs that did something (a CPU left out was idle for the whole
    // `sim_time_ns`): the table costs the CPUs the run used, not the machine's.
    let cpus = report
        .cpu_time
        .iter()
        .enumerate()
        .filter(|(_, time)| time.idle_ns != time.total_ns())
        .map(|(cpu, time)| cpu_object(cpu, time))
        .collect();
    obj.insert("cpu_time".into(), Value::Array(cpus));
    // Only what counted something, each row with the CPUs that counted it:
    // the table costs its non-zero entries, not IRQs x CPUs.
    let rows = report.interrupts.iter().filter(|row| row.total() > 0).map(|row| {
        let per_cpu: Map<String, Value> = row.per_cpu.iter().map(|&(c, n)| (c.to_string(), json!(n))).collect();
        json!({
            "label": row.label,
            "per_cpu": per_cpu,
            "total": row.total(),
            "chip": row.chip,
            "name": row.name,
        })
    });
    obj.insert("interrupts".into(), Value::Array(rows.collect()));
    obj.insert("ipis_per_cpu".into(), json!(report.ipis_per_cpu));
    let ratio = |m: u64, n: u64| float(if n == 0 { 0.0 } else { m as f64 / n as f64 });
    let disks = report.disks.iter().map(|disk| {
        json!({
            "name": disk.name,
            "iops": float(disk.iops),
            "util_pct": float(disk.util_pct),
            "ios": disk.ios[0] + disk.ios[1],
            "discards": disk.discards,
            "discard_merges": disk.discard_merges,
            "requests": disk.requests,
            "device_msis": disk.msis,
            "irq_handler_runs": disk.irq_handler_runs,
            "ios_per_msi": ratio(disk.requests, disk.msis),
            "ios_per_handler_run": ratio(disk.requests, disk.irq_handler_runs),
        })
    });
    obj.insert("disks".into(), Value::Array(disks.collect()));
    let inv = &report.invariants;
    obj.insert(
        "exactly_once".into(),
        json!({
            "ios_issued": inv.ios_issued,
            "ios_reaped": inv.ios_reaped,
            "requests_live": inv.requests_live,
            "msis_sent": inv.msi.sent,
            "msis_handled": inv.msi.delivered,
            "msis_merged": inv.msi.merged,
            "msis_pending": inv.msi_pending,
        }),
    );
    let h = &report.hotplug;
    obj.insert(
        "hotplug".into(),
        json!({
            "cpus_down": h.cpus_down,
            "cpus_up": h.cpus_up,
            "task_migrations": h.task_migrations,
            "irqs_moved": h.irqs_moved,
            "irqs_shut_down": h.irqs_shut_down,
            "irqs_started": h.irqs_started,
            "drain_waits": h.drain_waits,
        }),
    );
    if let Some(g) = &report.gsim {
        let delay = g.delay_ns.iter().map(|&(cpu, ns)| json!({ "cpu": cpu, "delay_ns": ns }));
        obj.insert(
            "gsim".into(),
            json!({
                "moderated": g.moderated,
                "stray": g.stray,
                "timers_set": g.timers_set,
                "timer_fires": g.timer_fires,
                "held": g.held,
                "masks": g.masks,
                "mean_held_ns": g.mean_held_ns,
                "max_held_ns": g.max_held_ns,
                "mean_listed_ns": g.mean_listed_ns,
                "epochs": g.epochs,
                "global_irq_high": g.global_irq_high,
                "local_irq_high": g.local_irq_high,
                "hardirq_high": g.hardirq_high,
                "delay_ns": delay.collect::<Vec<_>>(),
            }),
        );
    }
    obj.insert("msi".into(), msi_object(report));
    obj.insert("io_breakdown".into(), super::breakdown::json(report));
    let cpu_ns: u64 = report.cpu_time.iter().map(|c| c.total_ns()).sum();
    let locks = report.locks.iter().map(|l| {
        json!({
            "name": l.name,
            "acquisitions": l.acquisitions,
            "contended": l.contended,
            "contended_pct": float(if l.acquisitions == 0 { 0.0 } else { l.contended as f64 * 100.0 / l.acquisitions as f64 }),
            "wait_ns": l.wait_ns,
            "hold_ns": l.hold_ns,
            // Share of all CPUs' time spent spinning for it.
            "wait_cpu_pct": float(if cpu_ns == 0 { 0.0 } else { l.wait_ns as f64 * 100.0 / cpu_ns as f64 }),
        })
    });
    obj.insert("locks".into(), Value::Array(locks.collect()));
    if !report.schedulers.is_empty() {
        // Only schedulers that keep counters (kyber) appear.
        let scheds = report.schedulers.iter().map(|s| {
            let counters: serde_json::Map<String, Value> =
                s.counters.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
            json!({ "device": s.device, "scheduler": s.scheduler, "counters": counters })
        });
        obj.insert("schedulers".into(), Value::Array(scheds.collect()));
    }
    let path = report.interrupt_path.iter().map(|p| {
        json!({
            "name": p.name,
            "messages": p.messages,
            "busy_pct": float(p.busy_pct),
        })
    });
    obj.insert("interrupt_path".into(), Value::Array(path.collect()));
    // Only runs with `--patch hybrid-iopoll` have hybrid rings.
    let hybrid: Vec<Value> = report
        .jobs
        .iter()
        .filter_map(|j| {
            let h = j.hybrid_iopoll?;
            Some(json!({
                "job": j.config.name,
                "sleeps": h.sleeps,
                "sleep_ns": h.sleep_ns,
                "hybrid_poll_time_ns": h.poll_time_ns,
            }))
        })
        .collect();
    if !hybrid.is_empty() {
        obj.insert("hybrid_iopoll".into(), Value::Array(hybrid));
    }
    obj.insert("sim_time_ns".into(), json!(report.sim_time_ns));
    obj.insert("events".into(), json!(report.events));
    obj.insert("seed".into(), json!(report.seed));
    // Per entry of `jobs`: what fio's terse line prints that its JSON does not carry.
    obj.insert("terse".into(), terse);
    merge_extra(&mut obj, extra);
    obj
}

/// Device MSIs, posted-MSI notifications and handler runs, per CPU and in
/// total, with MSIs per notification and both rates per second.
fn msi_object(report: &RunReport) -> Value {
    let secs = report.sim_time_ns as f64 / 1e9;
    let rate = |n: u64| float(if secs > 0.0 { n as f64 / secs } else { 0.0 });
    let ratio = |m: u64, n: u64| float(if n == 0 { 0.0 } else { m as f64 / n as f64 });
    let entry = |cpu: Option<usize>, m: u64, n: u64, pmn: u64, irqs: u64| {
        let mut v = json!({
            "device_msis": m,
            "notifications": n,
            "pmn": pmn,
            "device_irq_handler_runs": irqs,
            "msis_per_notification": ratio(m, n),
            "device_msis_per_sec": rate(m),
            "notifications_per_sec": rate(n),
        });
        if let Some(c) = cpu {
            v.as_object_mut().unwrap().insert("cpu".into(), json!(c));
        }
        v
    };
    let per_cpu: Vec<Value> = report
        .msi_per_cpu
        .iter()
        .enumerate()
        .filter(|(_, c)| c.device_msis + c.notifications + c.pmn + c.device_irqs > 0)
        .map(|(i, c)| entry(Some(i), c.device_msis, c.notifications, c.pmn, c.device_irqs))
        .collect();
    let sum = |f: fn(&blksim::stats::MsiCpuStats) -> u64| report.msi_per_cpu.iter().map(f).sum::<u64>();
    let total = entry(None, sum(|c| c.device_msis), sum(|c| c.notifications), sum(|c| c.pmn), sum(|c| c.device_irqs));
    json!({
        "mode": if report.posted_msi { "posted" } else { "remappable" },
        "total": total,
        "per_cpu": per_cpu,
    })
}

/// One CPU's time by context, in ns and as a share of its total.
fn cpu_object(cpu: usize, time: &CpuTime) -> Value {
    let total = time.total_ns();
    let pct = |ns: u64| float(if total == 0 { 0.0 } else { ns as f64 * 100.0 / total as f64 });
    json!({
        "cpu": cpu,
        "user_ns": time.user_ns,
        "sys_ns": time.sys_ns,
        "hardirq_ns": time.hardirq_ns,
        "softirq_ns": time.softirq_ns,
        "idle_ns": time.idle_ns,
        "iowait_ns": time.iowait_ns,
        "user_pct": pct(time.user_ns),
        "sys_pct": pct(time.sys_ns),
        "hardirq_pct": pct(time.hardirq_ns),
        "softirq_pct": pct(time.softirq_ns),
        "idle_pct": pct(time.idle_ns),
        "iowait_pct": pct(time.iowait_ns),
    })
}

/// `extra`'s keys go after the report's, in their order; a key the report
/// already has is replaced in place. `null` adds nothing; any other
/// non-object goes under the key `extra`.
fn merge_extra(obj: &mut Map<String, Value>, extra: Value) {
    match extra {
        Value::Null => {}
        Value::Object(map) => {
            for (key, value) in map {
                obj.insert(key, value);
            }
        }
        other => {
            obj.insert("extra".into(), other);
        }
    }
}
