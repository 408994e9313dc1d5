"""A team's domain, read from its own app, and the message bodies made from its sample."""

from onceflow.domain.app import Domain, DomainError, load_domain
from onceflow.domain.bodies import conflicting_candidates, fresh_bodies, new_run_id, poison_candidates

__all__ = [
    "Domain",
    "DomainError",
    "conflicting_candidates",
    "fresh_bodies",
    "load_domain",
    "new_run_id",
    "poison_candidates",
]
