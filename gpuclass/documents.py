"""Reading documents from untrusted files: YAML with its nesting bounded.

Policies and Kubernetes manifests are YAML (or JSON, which is YAML); both are
read through :func:`depth_limited` loaders, so a hostile nesting fails fast with
a clear error instead of costing seconds or the stack.

>>> import yaml
>>> yaml.load("[" * 200 + "]" * 200, Loader=depth_limited(yaml.SafeLoader))
Traceback (most recent call last):
...
yaml.composer.ComposerError: nested deeper than 100 levels
...
"""

from __future__ import annotations

__all__ = ["MAX_YAML_DEPTH", "depth_limited"]

# Deeper YAML is refused: real manifests nest a dozen levels, and PyYAML's scanner
# costs O(depth) per token, so a hostile "[[[[..." took seconds before failing.
MAX_YAML_DEPTH = 100


def depth_limited(base):
    """A subclass of the PyYAML loader ``base`` that refuses nesting past MAX_YAML_DEPTH."""
    import yaml

    class Loader(base):
        _depth = 0

        def compose_node(self, parent, index):
            self._depth += 1
            try:
                if self._depth > MAX_YAML_DEPTH:
                    raise yaml.composer.ComposerError(
                        None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                        self.peek_event().start_mark)
                return super().compose_node(parent, index)
            finally:
                self._depth -= 1

    return Loader
