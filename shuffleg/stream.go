package shuffleg

import (
	"crypto/aes"
	"crypto/cipher"
	"encoding/binary"
	"math"

	"github.com/darrm/darrm/internal/outward"
)

// stream is the randomness of one run: the key stream of AES-256 in counter
// mode, a cryptographically secure generator that is several times faster
// here than ChaCha8 for the millions of Gaussian draws of a run (about one
// per coordinate and step). It implements math/rand/v2's Source, so
// rand.New(s) shuffles with it, and draws Gaussians itself by the same
// ziggurat as rand.Rand.NormFloat64, bit for bit on the same words.
type stream struct {
	ctr cipher.Stream
	buf [4096]byte
	pos int // next unread byte of buf
}

// newStream returns the stream keyed by key (AES-256, zero initial
// counter). Equal keys give equal streams.
func newStream(key [32]byte) *stream {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // unreachable: a 32-byte key is always valid
	}
	s := &stream{ctr: cipher.NewCTR(block, make([]byte, aes.BlockSize))}
	s.pos = len(s.buf)
	return s
}

func (s *stream) refill() {
	clear(s.buf[:])
	s.ctr.XORKeyStream(s.buf[:], s.buf[:])
	s.pos = 0
}

// Uint64 returns the next 64 bits of the stream (little-endian words of
// the key stream).
func (s *stream) Uint64() uint64 {
	if s.pos > len(s.buf)-8 {
		s.refill()
	}
	v := binary.LittleEndian.Uint64(s.buf[s.pos:])
	s.pos += 8
	return v
}

// float64 returns a uniform float64 in [0, 1) as rand.Rand.Float64 does.
func (s *stream) float64() float64 { return float64(s.Uint64()<<11>>11) / (1 << 53) }

// NormFloat64 returns a standard normal draw by the ziggurat method of
// Marsaglia and Tsang (2000), as in math/rand/v2's NormFloat64.
func (s *stream) NormFloat64() float64 {
	for {
		u := s.Uint64()
		j := int32(u)
		i := u >> 32 & 0x7F
		x := float64(j) * float64(zigW[i])
		aj := uint32(j)
		if j < 0 {
			aj = uint32(-j)
		}
		if aj < zigK[i] {
			return x
		}
		if i == 0 {
			for {
				x = -outward.Ln(s.float64()) * (1.0 / zigR)
				y := -outward.Ln(s.float64())
				if y+y >= x*x {
					break
				}
			}
			if j > 0 {
				return zigR + x
			}
			return -zigR - x
		}
		if zigF[i]+float32(s.float64())*(zigF[i-1]-zigF[i]) < float32(math.Exp(-.5*x*x)) {
			return x
		}
	}
}
