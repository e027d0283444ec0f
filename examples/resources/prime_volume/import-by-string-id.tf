import {
  to = prime_volume.datasets
  id = "eval-datasets"
}
