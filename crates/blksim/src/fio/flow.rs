//! fio: flow control between jobs (`flow.c`, state). The jobs of one
//! `flow_id` share a counter (starting at 1) and the sum of their `flow`
//! weights; before each io_u a job checks its own count against the
//! group's: while its share of the I/O is above its share of the weight
//! (`flow_threshold_exceeded`), it holds (spinning in `do_io`'s loop, or
//! quiescing and sleeping `flow_sleep` µs), else both counters go up. A job
//! that ends takes its count and weight out.

use crate::ids::JobId;

/// One `flow_id`'s shared state (fio's `struct fio_flow`).
#[derive(Clone, Debug)]
pub(crate) struct FlowGroup {
    pub id: u32,
    /// `flow_counter`: 1 plus the members' counts.
    pub counter: u64,
    pub total_weight: u64,
    /// The running jobs in it.
    pub members: Vec<JobId>,
}

/// Every flow group of the run (fio's `flow_list`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Flows {
    pub groups: Vec<FlowGroup>,
}

/// A job's part in its group (fio's `td->flow`, `td->flow_counter`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlowMember {
    pub group: usize,
    pub weight: u32,
    pub counter: u64,
    /// `flow_sleep`, µs: 0 spins.
    pub sleep_us: u64,
}

impl Flows {
    /// `flow_init_job`: job `j` joins group `id` with `weight` (the group made on first use).
    pub(crate) fn join(&mut self, id: u32, weight: u32, j: JobId) -> usize {
        let g = match self.groups.iter().position(|g| g.id == id) {
            Some(g) => g,
            None => {
                self.groups.push(FlowGroup { id, counter: 1, total_weight: 0, members: Vec::new() });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[g];
        if group.members.is_empty() {
            // fio frees a group its last job left and makes a new one.
            group.counter = 1;
            group.total_weight = 0;
        }
        group.total_weight += weight as u64;
        group.members.push(j);
        g
    }

    /// `flow_exit_job`.
    pub(crate) fn leave(&mut self, m: &FlowMember, j: JobId) {
        let group = &mut self.groups[m.group];
        group.counter -= m.counter;
        group.total_weight -= m.weight as u64;
        group.members.retain(|&k| k != j);
    }

    /// `flow_threshold_exceeded`'s test: is the job's share of the group's
    /// count above its share of the weight?
    pub(crate) fn exceeded(&self, m: &FlowMember) -> bool {
        let g = &self.groups[m.group];
        m.counter as f64 / g.counter as f64 > m.weight as f64 / g.total_weight as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_holds_while_its_share_is_above_its_weight() {
        let mut f = Flows::default();
        let (a, b) = (JobId(0), JobId(1));
        let mut ma = FlowMember { group: f.join(1, 1, a), weight: 1, counter: 0, sleep_us: 0 };
        let mut mb = FlowMember { group: f.join(1, 3, b), weight: 3, counter: 0, sleep_us: 0 };
        let mut issued = [0; 2];
        // Take turns as long as each may go: the counts end 1:3.
        for _ in 0..400 {
            for (m, n) in [(&mut ma, 0), (&mut mb, 1)] {
                if !f.exceeded(m) {
                    m.counter += 1;
                    f.groups[m.group].counter += 1;
                    issued[n] += 1;
                }
            }
        }
        assert!((issued[1] as f64 / issued[0] as f64 - 3.0).abs() < 0.05, "{issued:?}");
        // b leaves: a alone may always go.
        f.leave(&mb, b);
        assert_eq!(f.groups[0].total_weight, 1);
        assert!(!f.exceeded(&ma));
        f.leave(&ma, a);
        assert_eq!(f.groups[0].counter, 1, "fio's flow_put: an empty group's counter is back at 1");
    }
}
