"""Amazon S3 as AWS answers it where moto differs."""
