//! fio: `engines/cmdprio.c` (libaio's and io_uring's `cmdprio_percentage`
//! and `cmdprio_bssplit`): which io_us get a priority of their own, and the
//! per-priority latency statistics they go to (`ts->clat_prio`, index 0 the
//! job's own priority, `ts->ioprio`).

use crate::fio::rand::FRand;
use crate::stats::report::PrioStat;
use crate::workload::{CmdPrio, JobConfig};

/// A job's cmdprio state (boxed on `Job`, for jobs that use it).
#[derive(Clone, Debug)]
pub(crate) struct CmdPrios {
    /// Reads' and writes' entries, each priority with its statistics' index.
    dirs: [Vec<BsPrios>; 2],
}

/// One block size's entries (`None`: any size): their percentages' sum (fio's `tot_perc`),
/// and each (percentage, ioprio, statistics index).
type BsPrios = (Option<u64>, u32, Vec<(u32, u16, u8)>);

impl CmdPrios {
    /// `fio_cmdprio_init`: `None` when neither direction uses cmdprio. Each
    /// direction that does gets its statistics' priorities in `prios[d]`: the
    /// job's own first, then each new one in fio's order (`assign_clat_prio_index`).
    pub(crate) fn of(cfg: &JobConfig, prios: &mut [Vec<PrioStat>]) -> Option<CmdPrios> {
        if cfg.cmdprio.iter().all(Vec::is_empty) {
            return None;
        }
        let mut dirs: [Vec<BsPrios>; 2] = Default::default();
        for (d, entries) in cfg.cmdprio.iter().enumerate() {
            if entries.is_empty() {
                continue;
            }
            let values = &mut prios[d];
            values.push(PrioStat::of(cfg.ioprio));
            for CmdPrio { bs, prios } in entries {
                let mut indexed = Vec::with_capacity(prios.len());
                for &(perc, ioprio) in prios {
                    let index = match values.iter().position(|p| p.ioprio == ioprio) {
                        Some(i) => i,
                        None => {
                            values.push(PrioStat::of(ioprio));
                            values.len() - 1
                        }
                    };
                    indexed.push((perc, ioprio, index as u8));
                }
                let total = prios.iter().map(|p| p.0).sum();
                dirs[d].push((*bs, total, indexed));
            }
        }
        Some(CmdPrios { dirs })
    }

    /// `fio_cmdprio_set_ioprio` for an io_u of direction `d` (0 read, 1
    /// write) and `bytes`, from the job's `prio_state`: its priority and
    /// statistics index, or `None` to keep the job's.
    pub(crate) fn draw(&self, d: usize, bytes: u64, prio_state: &mut FRand) -> Option<(u16, u8)> {
        let &(_, total, ref prios) = self.dirs.get(d)?.iter().find(|(bs, ..)| bs.is_none_or(|bs| bs == bytes))?;
        if total == 0 {
            return None;
        }
        let rand = prio_state.between(0, 99) as u32;
        if rand >= total {
            return None;
        }
        let mut sum = 0;
        prios.iter().find_map(|&(perc, ioprio, index)| {
            sum += perc;
            (rand < sum).then_some((ioprio, index))
        })
    }
}
