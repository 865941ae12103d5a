//! Device meshes: rank grids in row-major order.
use std::os::raw::c_int;

use xffl_sys as sys;

use crate::buffer::read_ints;
use crate::error::{to_c_int, Error, Result};

/// A device mesh: its extents and its global ranks in row-major order.
///
/// FSDP meshes have one dimension (`"shard"`), HSDP meshes two (`"replica"`, `"shard"`): each row
/// of an HSDP mesh is one replica, each column one shard across replicas.
///
/// ```
/// let mesh = xffl::Mesh::grid(&[2, 3])?;
/// assert_eq!(mesh.shape(), &[2, 3]);
/// assert_eq!(mesh.ranks(), &[0, 1, 2, 3, 4, 5]);
/// assert_eq!(mesh.rows().collect::<Vec<_>>(), vec![&[0, 1, 2][..], &[3, 4, 5][..]]);
/// assert_eq!(mesh.column(1), vec![1, 4]);
/// # Ok::<(), xffl::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Mesh {
    shape: Vec<usize>,
    ranks: Vec<i32>,
}

impl Mesh {
    pub(crate) fn new(shape: Vec<usize>, ranks: Vec<i32>) -> Mesh {
        Mesh { shape, ranks }
    }

    /// The row-major rank grid `0 .. prod(shape)` of a mesh shape (`xffl_create_device_mesh`).
    ///
    /// Fails with [`ErrorKind::InvalidArgument`](crate::ErrorKind::InvalidArgument) for an empty
    /// shape, a zero extent or more ranks than a C `int` holds.
    pub fn grid(shape: &[usize]) -> Result<Mesh> {
        let c_shape = shape.iter().map(|&extent| to_c_int(extent, "mesh extent")).collect::<Result<Vec<c_int>>>()?;
        let ranks = read_ints(|buf, cap, len| {
            // SAFETY: c_shape holds shape.len() ints; buf holds cap ints; len is a valid out pointer.
            unsafe { sys::xffl_create_device_mesh(c_shape.as_ptr(), c_shape.len(), buf, cap, len) }
        })?;
        Ok(Mesh::new(shape.to_vec(), ranks))
    }

    /// The extents (one for FSDP, two for HSDP).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Every rank, in row-major order.
    pub fn ranks(&self) -> &[i32] {
        &self.ranks
    }

    /// The rows along the last dimension (for HSDP: one replica each).
    pub fn rows(&self) -> impl Iterator<Item = &[i32]> + '_ {
        let width = self.shape.last().copied().unwrap_or(1).max(1);
        self.ranks.chunks(width)
    }

    /// The ranks at position `index` of the last dimension, one per row (for HSDP: one shard across
    /// replicas). Empty if `index` is out of range.
    pub fn column(&self, index: usize) -> Vec<i32> {
        self.rows().filter_map(|row| row.get(index).copied()).collect()
    }

    pub(crate) fn check_shape(shape: &[c_int], ndim: usize, len: usize) -> Result<Vec<usize>> {
        let shape: Vec<usize> = shape[..ndim.min(shape.len())].iter().map(|&e| e.max(0) as usize).collect();
        if shape.iter().product::<usize>() != len {
            return Err(Error::new(
                crate::ErrorKind::Internal,
                format!("mesh shape {shape:?} does not match its {len} ranks"),
            ));
        }
        Ok(shape)
    }
}
