//! How a filesystem laid things out on disk, read after the fact: a file's
//! extents ([`frag`], FIEMAP) and an ext4 directory's htree depth
//! ([`htree`]). Below the lab, the workloads and the probes, which read it
//! (and the workloads and the probes never each other).

pub mod frag;
pub mod htree;
