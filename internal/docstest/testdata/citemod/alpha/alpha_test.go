package alpha

import "testing"

func TestPlan(t *testing.T) {}
