package cliout

import "testing"

func TestFormatText(t *testing.T) {
	for _, f := range []Format{Table, JSON, CSV} {
		b, _ := f.MarshalText()
		var got Format
		if err := got.UnmarshalText(b); err != nil || got != f {
			t.Errorf("%v: %q reads back as %v (%v)", f, b, got, err)
		}
	}
	var f Format
	if err := f.UnmarshalText([]byte("xml")); err == nil || f != "" {
		t.Errorf("xml: %v, format %q", err, f)
	}
}
