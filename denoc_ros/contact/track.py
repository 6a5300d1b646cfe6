# Copyright 2026 The denoc_ros Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
One contact located over a stream of joint states: a full search, then its neighbourhood.

:func:`denoc_ros.locate_contact` scores every cluster of the robot's surface (coarse), then the
fine points of the best clusters. While a contact lasts it stays on its link (a point of the
link's surface, the force free per instant), so the joint states after the first need not
search the whole surface again. :class:`ContactTracker` makes the full search on the first
joint state of a contact, and on the following ones scores only the *tracked* points: the
clusters of the points that took part in the last full search's answer (those it screened for
reachability, those it refined off the grid, its candidates), those it scored finely around
its point, each as it scored them (fine, or the cluster's coarse point), and on every other
link the coarse points of its best clusters (sentinels); then judges them
exactly as the full search judges its points (the same reachability, refinement off the
sampling grid, band, weights and located/ambiguous/unexplained decision; the idea of the
contact particle filter, Manuelli & Tedrake, IROS 2016, of keeping the hypotheses near the last
ones). The full
search runs again

- every ``full_period`` joint states (a contact that moved somewhere no tracked point is),
- when the tracked answer's status or link differs from the last full search's,
- when the tracked best chi-square exceeds the last full search's by more than the band
  (``BAND**2``): the tracked points explain the torques markedly worse than before,

and its answer is the one returned. On the same inputs as the full search, the tracked points
are a subset of its points that holds every one that took part in its answer, so the answer is
the same (status, link, point, force); the candidate set can differ a little where the full
search's branch and bound (:func:`score_points`) left a point at its lower bound that the
smaller set scores exactly.
"""

import math

import numpy as np

from .locate import (_check_options, _full_points, _judge, _Points, _problem, _ranges,
                     ContactLocation)
from ..errors import InputError

__all__ = ['ContactTracker', 'FULL_PERIOD', 'NEIGHBOURHOOD']

FULL_PERIOD = 25
"""Joint states between full searches while tracking (25 ms at 1 kHz)."""
NEIGHBOURHOOD = 0.045
"""Clusters [m] whose representative lies this close to the best point are tracked too."""


class ContactTracker:
    """
    Locate one contact over consecutive joint states (module docstring).

    ``model``, ``geometry`` and the keywords as for :func:`denoc_ros.locate_contact`;
    ``full_period``: joint states between full searches (1: every one is a full search).
    :meth:`update` takes one joint state's ``q`` and ``tau_ext`` (with that state's ``noise``
    and ``threshold``) and returns its :class:`denoc_ros.ContactLocation`; :meth:`reset` when
    the contact ended (the next update searches fully). ``full_searches`` and ``tracked``
    count the updates of each kind, ``last_full`` says what the last one was.
    """

    def __init__(self, model, geometry, *, friction_coefficient=0.6, relative_noise=0.02,
                 resolution=0.02, full_period=FULL_PERIOD):
        _check_options(friction_coefficient, relative_noise, resolution)
        if not (isinstance(full_period, (int, np.integer)) and full_period >= 1):
            raise InputError(f'full_period must be an integer >= 1, got {full_period!r}')
        self.model, self.geometry = model, geometry
        self.friction_coefficient = friction_coefficient
        self.relative_noise = relative_noise
        self.resolution = resolution
        self.full_period = int(full_period)
        self.full_searches = self.tracked = 0
        self.last_full = False
        self.reset()

    @property
    def tracking(self):
        """Return True while a contact is tracked (the next update may skip the full search)."""
        return self._points is not None

    @property
    def tracked_points(self):
        """Return how many surface points a tracked update scores (0 when not tracking)."""
        return 0 if self._points is None else self._points.owner.shape[0]

    def reset(self):
        """Forget the tracked contact: the next :meth:`update` makes the full search."""
        self._points = None      # the tracked _Points (scores refilled per update)
        self._since = 0          # updates since the last full search
        self._status = self._link = None   # the last full search's answer
        self._r_min2 = math.inf
        self._problem = None     # the last update's prepared inputs (its links' poses)

    def link_rotation(self, link):
        """
        Return the rotation (3, 3) of ``link``'s axes in the base frame at the last update.

        The pose the locator placed the link's surface with (the same forward kinematics as
        :func:`denoc_ros.frame_pose`); None if the last update had no contact or ``link`` has
        no surface.
        """
        p = self._problem
        if p is None or link not in p.surf.names:
            return None
        return p.Rs[p.surf.names.index(link)].copy()

    def update(self, q, tau_ext, *, noise=0.3, threshold=None):
        """Return the :class:`denoc_ros.ContactLocation` of this joint state (tracked or full)."""
        p = _problem(self.model, self.geometry, q, tau_ext, self.friction_coefficient, noise,
                     self.relative_noise, threshold, self.resolution, checked=True)
        if isinstance(p, ContactLocation):   # no contact, or nothing to locate it on
            self.reset()
            self.last_full = False
            return p
        self._problem = p
        if self._points is None or self._since + 1 >= self.full_period:
            return self._full(p)
        points = self._points
        points.score(p)
        location, r_min2, _ = _judge(p, points)
        if (location.status != self._status or location.link != self._link
                or r_min2 > self._r_min2 + p.band2):
            return self._full(p)
        self._since += 1
        self.tracked += 1
        self.last_full = False
        return location

    def _full(self, p):
        """Make the full search, and track the points that took part and those near its point."""
        points = _full_points(p)
        location, r_min2, took_part = _judge(p, points)
        self.full_searches += 1
        self.last_full = True
        self._since = 0
        self._status, self._link, self._r_min2 = location.status, location.link, r_min2
        self._points = _tracked_points(p.surf, points, took_part, location)
        return location


def _tracked_points(surf, points, took_part, location):
    """
    Return the :class:`_Points` to track of a full search's ``points``.

    The clusters of the points that took part in its answer (``took_part``), and the clusters
    it scored finely within :data:`NEIGHBOURHOOD` of its point; each as the full search scored
    it (fine, or its coarse point): on the same inputs they give the full search's answer
    (:func:`screen_and_refine`). And on each link none of those is on, the coarse points of
    its best clusters by evidence and by fit (sentinels: outside the full search's reach on the
    same inputs, one that comes within the band changes the answer, and a full search runs).
    """
    m = points.fine.shape[0]
    part = np.flatnonzero(took_part)
    fine = np.unique(points.cluster[part[part < m]])
    coarse = np.unique(points.cluster[part[part >= m]])
    if location.link:
        L = surf.names.index(location.link)
        lo, hi = surf.link_clusters[L], surf.link_clusters[L + 1]
        near = lo + np.flatnonzero(np.linalg.norm(surf.coarse_points[lo:hi] - location.point,
                                                  axis=1) <= NEIGHBOURHOOD)
        fine = np.union1d(fine, np.intersect1d(near, points.cluster[:m]))
    # sentinels: on each link without a tracked point, its best clusters' coarse points
    tracked = np.zeros(len(surf.names), dtype=bool)
    tracked[surf.coarse_owner[fine]] = True
    tracked[surf.coarse_owner[coarse]] = True
    sentinels = points.link_best[~tracked[surf.coarse_owner[points.link_best]]]
    coarse = np.union1d(coarse, sentinels)
    return _Points(surf, _ranges(surf.start, fine.astype(np.int64)), coarse.astype(np.int64))
