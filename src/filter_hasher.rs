//! The streaming hasher of the default hasher: the bytes a key's `Hash` impl writes, gathered
//! in blocks and hashed by XXH3, or by the builder's function of one word for a stream of
//! exactly eight bytes.

use core::hash::Hasher;
use xxhash_rust::xxh3::xxh3_64_with_seed;

use crate::word_mix::{strong_avalanche, WordFunction, WordMix};

/// Bytes gathered before a block is folded into the running state. Keys up to this size (nearly
/// all keys) cost exactly one XXH3 call.
pub(crate) const BLOCK: usize = 64;

/// The [`Hasher`] made by [`DefaultHashBuilder`](crate::DefaultHashBuilder).
///
/// Bytes collect in a 64-byte buffer; each full block is folded into the running state with one
/// XXH3 call seeded by that state, so the result depends only on the byte stream, never on how a
/// `Hash` impl splits it into writes.
#[derive(Clone, Debug)]
pub struct FilterHasher {
    state: u64,
    /// The builder's, for the seed `state` starts as.
    flip_4to8: u64,
    mix: WordMix,
    word: WordFunction,
    buf: [u8; BLOCK],
    len: usize,
    folded: u64,
}

impl FilterHasher {
    /// A hasher of an empty stream for a builder with this seed, the seed's [`flip_4to8`], its
    /// words and its function for eight bytes.
    ///
    /// [`flip_4to8`]: crate::word_mix::flip_4to8
    #[inline(always)]
    pub(crate) fn new(seed: u64, flip_4to8: u64, mix: WordMix, word: WordFunction) -> Self {
        Self {
            state: seed,
            flip_4to8,
            mix,
            word,
            buf: [0; BLOCK],
            len: 0,
            folded: 0,
        }
    }

    /// Appends bytes. The common case, bytes that fit the block, is small enough to inline, so
    /// that a fixed-size key's writes reduce to a few stores the optimiser can see through.
    #[inline(always)]
    fn push(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.push_folding(bytes),
        }
    }

    /// [`Self::push`] of bytes that overflow the block: folds each full block into the state.
    #[cold]
    #[inline(never)]
    fn push_folding(&mut self, mut bytes: &[u8]) {
        loop {
            if self.len == BLOCK {
                self.state = xxh3_64_with_seed(&self.buf, self.state);
                self.folded += 1;
                self.len = 0;
            }
            let take = (BLOCK - self.len).min(bytes.len());
            self.buf[self.len..self.len + take].copy_from_slice(&bytes[..take]);
            self.len += take;
            bytes = &bytes[take..];
            if bytes.is_empty() {
                return;
            }
        }
    }

    /// [`Hasher::finish`] of any stream: one XXH3 call over the bytes of the last block, for a
    /// length only known at run time.
    #[inline(never)]
    pub(crate) fn finish_stream(&self) -> u64 {
        let tail = &self.buf[..self.len];
        if self.folded == 0 {
            return match <[u8; 8]>::try_from(tail) {
                Ok(word) => self
                    .word
                    .hash(u64::from_le_bytes(word), self.mix, self.flip_4to8),
                Err(_) => xxh3_64_with_seed(tail, self.state),
            };
        }
        // A stream that folded blocks ends under a seed that also records how many it folded.
        xxh3_64_with_seed(
            tail,
            self.state ^ self.folded.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        )
    }

    /// `xxh3_64_with_seed` over the first `N` bytes of the block, `N` from 4 to 8 and no block
    /// folded (the seed is the builder's): XXH3's path for that length, with the seed's part
    /// taken from the builder.
    #[inline(always)]
    fn finish_4to8<const N: usize>(&self) -> u64 {
        let word = |at: usize| {
            let mut bytes = [0; 4];
            bytes.copy_from_slice(&self.buf[at..at + 4]);
            u64::from(u32::from_le_bytes(bytes))
        };
        let input = word(N - 4).wrapping_add(word(0) << 32);
        strong_avalanche(input ^ self.flip_4to8, N as u64)
    }

    /// The first eight bytes of the block.
    #[inline(always)]
    fn first_word(&self) -> u64 {
        let mut bytes = [0; 8];
        bytes.copy_from_slice(&self.buf[..8]);
        u64::from_le_bytes(bytes)
    }

    /// XXH3 over the first `N` bytes of the block, with `N` fixed at compile time: XXH3 then
    /// reduces to its short path for that one length.
    #[inline(always)]
    fn finish_short<const N: usize>(&self) -> u64 {
        let mut bytes = [0; N];
        bytes.copy_from_slice(&self.buf[..N]);
        xxh3_64_with_seed(&bytes, self.state)
    }
}

impl Hasher for FilterHasher {
    #[inline(always)]
    fn finish(&self) -> u64 {
        // A lone integer key (the length is a constant once `hash_one` is inlined) takes a
        // branch-free path with the same value as `finish_stream`; any other key takes a call.
        if self.folded == 0 {
            match self.len {
                1 => return self.finish_short::<1>(),
                2 => return self.finish_short::<2>(),
                4 => return self.finish_4to8::<4>(),
                8 => return self.word.hash(self.first_word(), self.mix, self.flip_4to8),
                16 => return self.finish_short::<16>(),
                _ => {}
            }
        }
        self.finish_stream()
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.push(bytes);
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.push(&[i]);
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.push(&i.to_le_bytes());
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i8(&mut self, i: i8) {
        self.write_u8(i as u8);
    }

    #[inline]
    fn write_i16(&mut self, i: i16) {
        self.write_u16(i as u16);
    }

    #[inline]
    fn write_i32(&mut self, i: i32) {
        self.write_u32(i as u32);
    }

    #[inline]
    fn write_i64(&mut self, i: i64) {
        self.write_u64(i as u64);
    }

    #[inline]
    fn write_i128(&mut self, i: i128) {
        self.write_u128(i as u128);
    }

    #[inline]
    fn write_isize(&mut self, i: isize) {
        self.write_u64(i as i64 as u64);
    }
}
