package noise

import (
	crand "crypto/rand"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// sourceBlock is how many random bytes a Source fetches at a time: one
// getrandom call serves 4096 draws, so throughput is not bound by system
// calls.
const sourceBlock = 32 << 10

// Source is the randomness of a release: uniform 64-bit words read
// in blocks from crypto/rand (NewSource), or from a seeded ChaCha8 stream
// for reproducible experiments (NewSeededSource), whose output must not be
// released. A Source is not safe for concurrent use. The zero value
// reads from crypto/rand, as NewSource's does.
type Source struct {
	fill   func([]byte)
	buf    []byte
	pos    int
	seeded bool
	seed   uint64
}

// NewSource returns a Source that reads from crypto/rand, for private
// releases.
func NewSource() *Source {
	return &Source{
		// crypto/rand.Read never returns an error: it aborts the program
		// rather than hand out bytes that are not random.
		fill: func(b []byte) { _, _ = crand.Read(b) },
		buf:  make([]byte, sourceBlock),
		pos:  sourceBlock,
	}
}

// NewSeededSource returns a Source that replays the ChaCha8 stream of
// seed (math/rand/v2). Its output is reproducible and therefore NOT for
// release: anyone who knows the seed can strip the noise.
func NewSeededSource(seed uint64) *Source { return NewSeededStream(seed, 0) }

// NewSeededStream returns the seeded source of stream number stream of
// seed: distinct streams are independent ChaCha8 streams (distinct keys),
// for draws that must not depend on each other's number (one stream per
// simulated teacher); stream 0 is NewSeededSource's. Like it, NOT for
// release.
func NewSeededStream(seed, stream uint64) *Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	binary.LittleEndian.PutUint64(key[8:], stream)
	// The key's tag is part of every seeded output: it keeps the name of
	// the package the sources were first written in, so that a seed
	// replays what it always did.
	copy(key[16:], "darrm/ensemble")
	c := rand.NewChaCha8(key)
	return &Source{
		fill:   func(b []byte) { _, _ = c.Read(b) },
		buf:    make([]byte, sourceBlock),
		pos:    sourceBlock,
		seeded: true,
		seed:   seed,
	}
}

// Seeded reports whether s is a seeded (not-for-release) source, and its seed.
func (s *Source) Seeded() (seed uint64, ok bool) { return s.seed, s.seeded }

// Uint64 returns a uniform 64-bit word.
func (s *Source) Uint64() uint64 {
	if s.pos > len(s.buf)-8 {
		if s.fill == nil {
			// The zero value reads crypto/rand, as a private release
			// must: a release may be given &Source{}.
			*s = *NewSource()
		}
		s.fill(s.buf)
		s.pos = 0
	}
	v := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return v
}

// IntN returns a uniform integer in [0, n), n >= 1, exactly (Lemire's
// multiply-and-reject method: no modulo bias). It panics if n <= 0, as
// math/rand/v2's does: [0, n) is then empty.
func (s *Source) IntN(n int) int {
	if n <= 0 {
		panic("noise: invalid argument to IntN")
	}
	return int(s.Uint64N(uint64(n)))
}

// Uint64N returns a uniform integer in [0, n), n > 0, exactly (Lemire's
// method), for bounds beyond IntN's: the exact samplers compare draws with
// rationals whose denominators reach 2^64 - 1. It panics if n is 0, as
// math/rand/v2's does.
func (s *Source) Uint64N(un uint64) uint64 {
	if un == 0 {
		panic("noise: invalid argument to Uint64N")
	}
	hi, lo := bits.Mul64(s.Uint64(), un)
	if lo < un {
		thresh := -un % un
		for lo < thresh {
			hi, lo = bits.Mul64(s.Uint64(), un)
		}
	}
	return hi
}

// Float64 returns a uniform float64 in [0, 1) with 53 random bits: a
// word's top 53 bits times 2^-53, exactly.
func (s *Source) Float64() float64 { return float64(s.Uint64()>>11) * 0x1p-53 }
