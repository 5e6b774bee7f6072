//! `mpstat -P ALL` and `iostat -x` shaped summaries of a whole run.

use blksim::stats::RunReport;

fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// `mpstat -P ALL`: per CPU, the share of the run in each context.
pub fn write_mpstat(report: &RunReport) -> String {
    let mut s = format!(
        "{:<6}{:>8}{:>8}{:>8}{:>9}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}\n",
        "CPU", "%usr", "%nice", "%sys", "%iowait", "%irq", "%soft", "%steal", "%guest", "%gnice", "%idle"
    );
    let row = |name: &str, t: &blksim::stats::CpuTime| {
        let total = t.total_ns();
        format!(
            "{:<6}{:>8.2}{:>8.2}{:>8.2}{:>9.2}{:>8.2}{:>8.2}{:>8.2}{:>8.2}{:>8.2}{:>8.2}\n",
            name,
            pct(t.user_ns, total),
            0.0,
            pct(t.sys_ns, total),
            pct(t.iowait_ns, total),
            pct(t.hardirq_ns, total),
            pct(t.softirq_ns, total),
            0.0,
            0.0,
            0.0,
            pct(t.idle_ns, total)
        )
    };
    let mut all = blksim::stats::CpuTime::default();
    for t in &report.cpu_time {
        all.user_ns += t.user_ns;
        all.sys_ns += t.sys_ns;
        all.hardirq_ns += t.hardirq_ns;
        all.softirq_ns += t.softirq_ns;
        all.idle_ns += t.idle_ns;
        all.iowait_ns += t.iowait_ns;
    }
    s += &row("all", &all);
    for (i, t) in report.cpu_time.iter().enumerate() {
        s += &row(&i.to_string(), t);
    }
    s
}

/// `iostat -x`: the CPUs' average shares (`avg-cpu`, whose `%system`
/// counts hardirq and softirq time too, as sysstat's iostat does), then per
/// device rates, request sizes, waits, queue size and utilisation over the run.
pub fn write_iostat(report: &RunReport) -> String {
    let secs = report.sim_time_ns as f64 / 1e9;
    let mut all = blksim::stats::CpuTime::default();
    for t in &report.cpu_time {
        all.user_ns += t.user_ns;
        all.sys_ns += t.sys_ns + t.hardirq_ns + t.softirq_ns;
        all.idle_ns += t.idle_ns;
        all.iowait_ns += t.iowait_ns;
    }
    let total = all.total_ns();
    let mut s = format!(
        "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n        {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>7.2}\n\n",
        pct(all.user_ns, total),
        0.0,
        pct(all.sys_ns, total),
        pct(all.iowait_ns, total),
        0.0,
        pct(all.idle_ns, total)
    );
    s += &format!(
        "{:<12}{:>12}{:>12}{:>10}{:>8}{:>9}{:>10}{:>12}{:>12}{:>10}{:>8}{:>9}{:>10}{:>8}{:>8}\n",
        "Device",
        "r/s",
        "rkB/s",
        "rrqm/s",
        "%rrqm",
        "r_await",
        "rareq-sz",
        "w/s",
        "wkB/s",
        "wrqm/s",
        "%wrqm",
        "w_await",
        "wareq-sz",
        "aqu-sz",
        "%util"
    );
    for d in &report.disks {
        let per_s = |x: u64| if secs > 0.0 { x as f64 / secs } else { 0.0 };
        let kb = |sectors: u64| sectors as f64 / 2.0;
        let await_ms = |ticks: u64, ios: u64| if ios == 0 { 0.0 } else { ticks as f64 / ios as f64 };
        let req_kb = |sectors: u64, ios: u64| if ios == 0 { 0.0 } else { kb(sectors) / ios as f64 };
        let rqm_pct = |m: u64, ios: u64| pct(m, m + ios);
        let aqu = if secs > 0.0 { (d.ticks_ms[0] + d.ticks_ms[1]) as f64 / 1000.0 / secs } else { 0.0 };
        s += &format!(
            "{:<12}{:>12.2}{:>12.2}{:>10.2}{:>8.2}{:>9.2}{:>10.2}{:>12.2}{:>12.2}{:>10.2}{:>8.2}{:>9.2}{:>10.2}{:>8.2}{:>8.2}\n",
            d.name,
            per_s(d.ios[0]),
            kb(d.sectors[0]) / secs.max(1e-12),
            per_s(d.merges[0]),
            rqm_pct(d.merges[0], d.ios[0]),
            await_ms(d.ticks_ms[0], d.ios[0]),
            req_kb(d.sectors[0], d.ios[0]),
            per_s(d.ios[1]),
            kb(d.sectors[1]) / secs.max(1e-12),
            per_s(d.merges[1]),
            rqm_pct(d.merges[1], d.ios[1]),
            await_ms(d.ticks_ms[1], d.ios[1]),
            req_kb(d.sectors[1], d.ios[1]),
            aqu,
            d.util_pct
        );
    }
    s
}
