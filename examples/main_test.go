package examples_test

import (
	"testing"

	"github.com/primeintellect/terraform-provider-prime/internal/acctest"
)

func TestMain(m *testing.M) { acctest.Main(m) }
