//! CPU topology: sockets, NUMA nodes, cores, SMT siblings and last-level-cache
//! domains, numbered as Linux numbers them on x86 (all first threads of every
//! core, then all second threads).

/// Where one logical CPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuPlace {
    /// Its socket.
    pub socket: u32,
    /// Its NUMA node (global index).
    pub node: u32,
    /// Global core index.
    pub core: u32,
    /// Its last-level cache domain (global index).
    pub llc: u32,
    /// The other hardware thread of the core, if SMT.
    pub sibling: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
/// The CPU topology of a machine.
pub struct Topology {
    /// Sockets.
    pub sockets: u32,
    /// Cores per socket.
    pub cores_per_socket: u32,
    /// Hardware threads per core (1 or 2).
    pub threads_per_core: u32,
    /// NUMA nodes per socket.
    pub numa_nodes_per_socket: u32,
    /// Last-level cache domains per socket (e.g. CCDs).
    pub llc_per_socket: u32,
    /// Throughput of a core with both threads busy, relative to one thread alone.
    pub smt_throughput: f64,
    /// Every logical CPU, by Linux CPU number.
    pub cpus: Vec<CpuPlace>,
}

impl Topology {
    /// The topology of `sockets` sockets of `cores_per_socket` cores of `threads_per_core` threads, `nodes` NUMA nodes and `llcs` LLC domains per socket; `smt` is a core's throughput with both threads busy.
    pub fn new(
        sockets: u32,
        cores_per_socket: u32,
        threads_per_core: u32,
        nodes: u32,
        llcs: u32,
        smt: f64,
    ) -> Topology {
        let cores = sockets * cores_per_socket;
        let mut cpus = Vec::new();
        for thread in 0..threads_per_core {
            for core in 0..cores {
                let socket = core / cores_per_socket;
                let local = core % cores_per_socket;
                let node = socket * nodes + local / (cores_per_socket / nodes);
                let llc = socket * llcs + local / (cores_per_socket / llcs);
                let sibling = (threads_per_core == 2).then(|| if thread == 0 { core + cores } else { core });
                cpus.push(CpuPlace { socket, node, core, llc, sibling });
            }
        }
        Topology {
            sockets,
            cores_per_socket,
            threads_per_core,
            numa_nodes_per_socket: nodes,
            llc_per_socket: llcs,
            smt_throughput: smt,
            cpus,
        }
    }

    /// Logical CPUs.
    pub fn cpu_count(&self) -> u32 {
        self.cpus.len() as u32
    }

    /// NUMA nodes.
    pub fn node_count(&self) -> u32 {
        self.sockets * self.numa_nodes_per_socket
    }

    /// `cpus_share_cache`: same last-level cache.
    pub fn share_cache(&self, a: u32, b: u32) -> bool {
        self.cpus[a as usize].llc == self.cpus[b as usize].llc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_numbering_puts_siblings_one_core_count_apart() {
        let t = Topology::new(2, 4, 2, 1, 1, 1.2);
        assert_eq!(t.cpu_count(), 16);
        assert_eq!(t.cpus[0].sibling, Some(8));
        assert_eq!(t.cpus[8].sibling, Some(0));
        assert_eq!(t.cpus[5].socket, 1);
        assert!(t.share_cache(0, 3));
        assert!(!t.share_cache(0, 4));
        assert!(t.share_cache(0, 8));
    }
}
