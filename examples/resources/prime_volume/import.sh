# A personal volume is imported by its name, a team's by "<team_id>/<name>".
terraform import prime_volume.datasets eval-datasets
terraform import prime_volume.shared_models team_0123456789/shared-models
