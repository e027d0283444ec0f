import {
  to = prime_volume.datasets
  identity = {
    name = "eval-datasets"
  }
}
