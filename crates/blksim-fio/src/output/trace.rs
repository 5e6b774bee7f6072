//! The Chrome/Perfetto trace-event JSON of a run's timeline (fio-formats §5):
//! one process per CPU with task, softirq and hardirq threads, interrupt
//! instants, and one process per device with its queue-depth counter.

use std::collections::BTreeSet;
use std::fmt::Write;

use blksim::stats::{Trace, TraceName, TraceRecord, Track};

fn tid(track: Track) -> u32 {
    match track {
        Track::Task => 0,
        Track::Softirq => 1,
        Track::Hardirq => 2,
    }
}

/// Device processes come after every possible CPU id.
const DEVICE_PID_BASE: u32 = 100_000;

/// ns as trace microseconds with ns resolution.
fn us(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn quote(s: &str) -> String {
    serde_json::to_string(s).expect("string")
}

/// The trace as `{"traceEvents": [...], "displayTimeUnit": "ns"}`.
pub fn write_trace(trace: &Trace) -> String {
    let mut events: Vec<String> = Vec::new();
    let mut cpus = BTreeSet::new();
    let mut devs = BTreeSet::new();
    for r in &trace.records {
        match *r {
            TraceRecord::Slice { cpu, track, name, start_ns, end_ns } => {
                cpus.insert(cpu);
                let mut args = String::new();
                if let TraceName::Job { job, .. } = name {
                    args = format!(",\"args\":{{\"job\":{}}}", quote(&trace.job_names[job as usize]));
                }
                events.push(format!(
                    "{{\"ph\":\"X\",\"name\":{},\"pid\":{cpu},\"tid\":{},\"ts\":{},\"dur\":{}{args}}}",
                    quote(name.label()),
                    tid(track),
                    us(start_ns),
                    us(end_ns - start_ns)
                ));
            }
            TraceRecord::Instant { cpu, track, name, at_ns } => {
                cpus.insert(cpu);
                events.push(format!(
                    "{{\"ph\":\"i\",\"s\":\"t\",\"name\":{},\"pid\":{cpu},\"tid\":{},\"ts\":{}}}",
                    quote(name.label()),
                    tid(track),
                    us(at_ns)
                ));
            }
            TraceRecord::QueueDepth { dev, at_ns, depth } => {
                devs.insert(dev);
                events.push(format!(
                    "{{\"ph\":\"C\",\"name\":\"in flight\",\"pid\":{},\"ts\":{},\"args\":{{\"requests\":{depth}}}}}",
                    DEVICE_PID_BASE + dev as u32,
                    us(at_ns)
                ));
            }
        }
    }
    let mut meta = Vec::new();
    for cpu in &cpus {
        meta.push(format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{cpu},\"args\":{{\"name\":\"CPU {cpu}\"}}}}"
        ));
        meta.push(format!(
            "{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{cpu},\"args\":{{\"sort_index\":{cpu}}}}}"
        ));
        for track in [Track::Task, Track::Softirq, Track::Hardirq] {
            meta.push(format!(
                "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{cpu},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}",
                tid(track),
                track.name()
            ));
        }
    }
    for dev in &devs {
        meta.push(format!(
            "{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":{}}}}}",
            DEVICE_PID_BASE + *dev as u32,
            quote(&trace.dev_names[*dev as usize])
        ));
    }
    let mut out = String::from("{\"traceEvents\":[\n");
    for (i, e) in meta.iter().chain(events.iter()).enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push_str(e);
    }
    let _ = write!(
        out,
        "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"window_start_us\":{},\"window_end_us\":{}}}}}\n",
        us(trace.start_ns),
        us(trace.end_ns)
    );
    out
}
