//! How memcached 1.6.18 lays out its memory: 1 MiB pages carved into the chunks of a
//! **slab class**, the classes' chunk sizes growing by a factor (`slabs.c`, `slabs_init`).
//!
//! An item lives in the smallest class whose chunk holds it (header, key, suffix, data,
//! cas: [`item_size`](super::item::item_size)), and is evicted only to make room in that
//! class. A [`Geometry`] names every parameter that decides which class an item falls in and
//! how many items a page holds; memcached's own flags are in brackets.

use std::hash::{Hash, Hasher};

/// `sizeof(item)` on 64-bit Linux, which the first class adds to `-n`.
const ITEM_HEADER: usize = super::item::ITEM_HEADER;

/// memcached aligns every chunk size to 8 bytes (`CHUNK_ALIGN_BYTES`).
const CHUNK_ALIGN: usize = 8;

/// memcached's `MAX_NUMBER_OF_SLAB_CLASSES` (64, class 0 unused) less the one `slabs_init`
/// keeps for the largest chunk.
const MAX_CLASSES: usize = 62;

/// The growth factor (`-f`), kept as the `f64` memcached parses and compared by its bits
/// (so that a [`Geometry`] can be hashed and compared as part of the store's state).
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Factor(pub f64);

impl PartialEq for Factor {
    fn eq(&self, other: &Factor) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for Factor {}

impl Hash for Factor {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.0.to_bits().hash(h);
    }
}

/// memcached's memory layout and the LRU's background work.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Geometry {
    /// Bytes per slab page (`settings.slab_page_size`, 1 MiB). A page belongs to one class.
    pub page_size: usize,
    /// Minimum space for key, value and flags in the smallest chunk (`-n`, 48): the first
    /// class's chunk is `sizeof(item)` (48) plus this, aligned to 8.
    pub chunk_size: usize,
    /// The factor between consecutive classes' chunk sizes (`-f`, 1.25).
    pub factor: Factor,
    /// The largest chunk (`slab_chunk_max`, half a page); larger items are stored chunked.
    pub slab_chunk_max: usize,
    /// Whether the LRU maintainer runs (`-o no_lru_maintainer` turns it off): it moves items
    /// between HOT, WARM and COLD in the background.
    pub lru_maintainer: bool,
    /// `-o slab_automove=N` (1 by default): 0 never moves pages between classes, 1 moves
    /// them slowly from classes with free memory to classes that evict, 2 on every eviction.
    pub slab_automove: u8,
}

impl Default for Geometry {
    /// memcached 1.6.18's defaults: 1 MiB pages, `-n 48`, `-f 1.25`, 512 KiB chunks at most,
    /// the LRU maintainer on, `slab_automove=1`.
    fn default() -> Self {
        Geometry {
            page_size: 1024 * 1024,
            chunk_size: 48,
            factor: Factor(1.25),
            slab_chunk_max: 512 * 1024,
            lru_maintainer: true,
            slab_automove: 1,
        }
    }
}

/// One slab class: its number (from 1, as `stats slabs` counts), chunk size and chunks per page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SlabClass {
    /// The class's number, 1 for the smallest chunk.
    pub id: usize,
    /// Bytes per chunk.
    pub chunk: usize,
    /// Chunks per page.
    pub per_page: usize,
}

impl Geometry {
    /// The slab classes as `slabs_init` lays them out (what `memcached -vv` prints), smallest
    /// first: from `sizeof(item) + chunk_size`, each aligned to 8 bytes and multiplied by the
    /// factor (truncated, as memcached's `unsigned int size *= factor` does) until the next
    /// would reach `slab_chunk_max / factor`; the last class's chunk is `slab_chunk_max`.
    pub fn classes(&self) -> Vec<SlabClass> {
        let mut out = Vec::new();
        let mut size = ITEM_HEADER + self.chunk_size;
        while out.len() < MAX_CLASSES {
            if size as f64 >= self.slab_chunk_max as f64 / self.factor.0 {
                break;
            }
            if !size.is_multiple_of(CHUNK_ALIGN) {
                size += CHUNK_ALIGN - size % CHUNK_ALIGN;
            }
            out.push(SlabClass {
                id: out.len() + 1,
                chunk: size,
                per_page: self.page_size / size,
            });
            size = (size as f64 * self.factor.0) as usize;
        }
        out.push(SlabClass {
            id: out.len() + 1,
            chunk: self.slab_chunk_max,
            per_page: self.page_size / self.slab_chunk_max.max(1),
        });
        out
    }

    /// The class an item of `size` bytes (as [`item_size`](super::item::item_size) counts
    /// it) is stored in: the smallest whose chunk holds it, or the largest for an item
    /// stored chunked (`slabs_clsid`).
    pub fn class_of(&self, size: usize) -> SlabClass {
        let classes = self.classes();
        classes[class_index(&classes, size)]
    }

    /// One line naming the geometry, as reports print it: `1048576-byte pages, -n 48, -f 1.25`.
    pub fn describe(&self) -> String {
        format!(
            "{}-byte pages, -n {}, -f {}",
            self.page_size, self.chunk_size, self.factor.0
        )
    }
}

/// The index in `classes` (as [`Geometry::classes`] lists them) of the class an item of
/// `size` bytes is stored in: the smallest chunk that holds it, else the largest
/// (`slabs_clsid`).
pub fn class_index(classes: &[SlabClass], size: usize) -> usize {
    classes
        .partition_point(|c| c.chunk < size)
        .min(classes.len().saturating_sub(1))
}

/// An item the store evicted to make room, and the slab class it was evicted from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Eviction {
    /// The evicted item's key.
    pub key: Vec<u8>,
    /// The class whose memory was pressed.
    pub class: SlabClass,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `memcached -vv` (1.6.18, defaults) prints 39 classes: 96, 120, 152, … 394840, 524288.
    #[test]
    fn default_classes_are_memcached_defaults() {
        let classes = Geometry::default().classes();
        let chunks: Vec<usize> = classes.iter().map(|c| c.chunk).collect();
        assert_eq!(classes.len(), 39);
        assert_eq!(&chunks[..6], &[96, 120, 152, 192, 240, 304]);
        assert_eq!(&chunks[35..], &[252696, 315872, 394840, 524288]);
        assert_eq!(classes[0].per_page, 10922);
        assert_eq!(classes[38].per_page, 2);
        assert_eq!(classes[11].chunk, 1184);
        assert_eq!(classes[11].per_page, 885);
    }

    #[test]
    fn an_item_goes_to_the_smallest_class_that_holds_it() {
        let g = Geometry::default();
        assert_eq!(g.class_of(96).id, 1);
        assert_eq!(g.class_of(97).id, 2);
        assert_eq!(g.class_of(1_000_000).id, 39);
    }
}
