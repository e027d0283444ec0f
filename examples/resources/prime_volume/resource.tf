# A 20 GiB volume. Raising size_gb grows it in place; lowering it is an
# error at plan (volumes never shrink, and the provider never replaces one
# to make it smaller).
resource "prime_volume" "datasets" {
  name    = "eval-datasets"
  size_gb = 20
}

# A volume other owners may attach as "<owner>/<name>".
resource "prime_volume" "shared_models" {
  name    = "shared-models"
  size_gb = 100
  public  = true
}
