package votefile

import "io"

// newVoteReader reads r as 0/1 votes, the step of Read it tests.
func newVoteReader(r io.Reader, name string, opts readOptions) (*voteReader, error) {
	f, err := open(r, name, opts.Format)
	if err != nil {
		return nil, err
	}
	return f.Votes(opts)
}

// newClassReader reads r as counts or class indices, the step of Read
// it tests.
func newClassReader(r io.Reader, name string, opts classOptions) (*classReader, error) {
	f, err := open(r, name, opts.Format)
	if err != nil {
		return nil, err
	}
	return f.Classes(opts)
}
