//! memcached's slab allocator (`slabs.c`): memory in pages of `page_size` bytes, each
//! page given to one slab class and cut into that class's chunks; an item takes one chunk
//! of the smallest class that holds it.
//!
//! What is exact (memcached 1.6.18 without `-L`): a class takes a new page when its free
//! chunks run out; the page comes from the global pool (pages an automove gave back) or
//! from the memory limit (`-m`); a class with **no page yet gets its first page even above
//! the limit** (`do_slabs_newslab` refuses only when `p->slabs > 0`). Freed chunks go back
//! to their class, never to another class.
//!
//! Approximated: an item larger than `slab_chunk_max` is stored chunked as memcached
//! stores it (a header chunk of the class its key needs, then data chunks of at most
//! `slab_chunk_max` bytes each, `do_item_alloc_chunk`); the header's class is chosen from
//! the key's length without the 4 bytes of non-zero flags.

use super::geometry::{Geometry, SlabClass};

/// `sizeof(item_chunk)` on 64-bit Linux (42 bytes padded to 48).
const ITEM_CHUNK_HEADER: usize = 48;

/// Bytes of cas, as memcached adds them to every allocation.
const CAS: usize = super::item::CAS_SIZE;

/// One class's pages and chunks.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct ClassMem {
    /// Pages the class holds.
    pub pages: usize,
    /// Chunks in use (by items, or by an allocation in flight).
    pub used: usize,
}

/// The slab allocator's state.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Slabs {
    /// The classes as `slabs_init` lays them out (index 0 is class 1).
    pub classes: Vec<SlabClass>,
    /// Bytes per page.
    pub page_size: usize,
    /// The largest chunk.
    pub chunk_max: usize,
    /// `mem_limit` (`-m`).
    pub limit: usize,
    /// `mem_malloced`: bytes of pages taken from the limit.
    pub malloced: usize,
    /// Pages in the global pool (`SLAB_GLOBAL_PAGE_POOL`), free for any class.
    pub pool: usize,
    /// Per class, in the order of `classes`.
    pub class: Vec<ClassMem>,
}

impl Slabs {
    /// An empty allocator of `limit` bytes laid out as `geometry` says.
    pub fn new(geometry: &Geometry, limit: usize) -> Slabs {
        let classes = geometry.classes();
        let class = vec![ClassMem::default(); classes.len()];
        Slabs {
            classes,
            page_size: geometry.page_size,
            chunk_max: geometry.slab_chunk_max,
            limit,
            malloced: 0,
            pool: 0,
            class,
        }
    }

    /// The index of the class an allocation of `size` bytes falls in (`slabs_clsid`).
    #[inline]
    pub fn class_index(&self, size: usize) -> usize {
        super::geometry::class_index(&self.classes, size)
    }

    /// The chunks an item of `size` bytes (key of `key_len` bytes) takes, by class index:
    /// one chunk, or a header and data chunks when it is larger than `slab_chunk_max`.
    pub fn chunks_of(&self, size: usize, key_len: usize) -> smallvec::SmallVec<[u8; 2]> {
        let mut out = smallvec::SmallVec::new();
        if size <= self.chunk_max {
            out.push(self.class_index(size) as u8);
            return out;
        }
        let header = super::item::ITEM_HEADER + key_len + 1 + ITEM_CHUNK_HEADER + CAS;
        out.push(self.class_index(header) as u8);
        let mut remain = size.saturating_sub(header - ITEM_CHUNK_HEADER);
        while remain > 0 {
            let want = (remain + ITEM_CHUNK_HEADER).min(self.chunk_max);
            out.push(self.class_index(want) as u8);
            remain = remain.saturating_sub(want - ITEM_CHUNK_HEADER);
        }
        out
    }

    /// `do_slabs_alloc`: one chunk of class `c`, taking a new page when the class has no
    /// free chunk (from the pool, or from the limit unless it is reached and the class
    /// already has a page). `false` when no chunk is free.
    pub fn alloc(&mut self, c: usize) -> bool {
        let per_page = self.classes[c].per_page;
        let mem = &self.class[c];
        if mem.used >= mem.pages * per_page {
            if self.pool > 0 {
                self.pool -= 1;
            } else if self.malloced + self.page_size > self.limit && mem.pages > 0 {
                return false;
            } else {
                self.malloced += self.page_size;
            }
            self.class[c].pages += 1;
        }
        self.class[c].used += 1;
        true
    }

    /// Gives a chunk of class `c` back to its class.
    pub fn free(&mut self, c: usize) {
        self.class[c].used -= 1;
    }

    /// The class's free chunks (`free_chunks` in `stats slabs`).
    pub fn free_chunks(&self, c: usize) -> usize {
        self.class[c].pages * self.classes[c].per_page - self.class[c].used
    }

    /// Forgets every page (a restart).
    pub fn clear(&mut self) {
        self.malloced = 0;
        self.pool = 0;
        for mem in &mut self.class {
            *mem = ClassMem::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Slabs {
        let g = Geometry {
            page_size: 1024,
            slab_chunk_max: 512,
            ..Geometry::default()
        };
        Slabs::new(&g, 2048)
    }

    #[test]
    fn a_class_gets_its_first_page_even_above_the_limit() {
        let mut s = small();
        let big = s.class_index(500);
        let tiny = s.class_index(90);
        assert!(s.alloc(big) && s.alloc(big) && s.alloc(big) && s.alloc(big));
        assert_eq!(s.malloced, 2048);
        assert!(
            !s.alloc(big),
            "the limit is reached and the class has pages"
        );
        assert!(s.alloc(tiny), "a class without a page still gets one");
        assert_eq!(s.malloced, 3072);
        s.free(big);
        assert!(s.alloc(big), "a freed chunk is reused");
        assert_eq!(s.free_chunks(tiny), s.classes[tiny].per_page - 1);
    }

    #[test]
    fn large_items_are_chunked() {
        let s = small();
        let chunks = s.chunks_of(1200, 10);
        assert!(chunks.len() >= 3, "{chunks:?}");
        assert_eq!(s.chunks_of(100, 10).len(), 1);
    }
}
