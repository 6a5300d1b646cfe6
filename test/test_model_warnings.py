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
A model's warnings describe the model they are attached to.

``with_inertial_parameters`` judges the new bodies as the loader does: each expected tuple of
warnings is what ``load_urdf`` gives for a description carrying the new inertials (the loader on
the XML: another path to the same judgement), and the loader's notes about the description
itself (urdfdom's leniency, mimic joints) stay where they were.
"""

import warnings

import denoc_ros as dr
import numpy as np
import pytest

GOOD = (0.01, 0.0, 0.0, 0.02, 0.0, 0.025)      # ixx ixy ixz iyy iyz izz
TRIANGLE = (0.001, 0.0, 0.0, 0.001, 0.0, 0.01)  # violates A + B >= C (PR2's sensor mount)


def arm(l2_inertia=GOOD, l2_mass=1.0, centre=False, mimic=False):
    """Return a base and two links on revolute joints; l2's inertial as given."""
    ixx, ixy, ixz, iyy, iyz, izz = l2_inertia
    unknown = '<centre/>' if centre else ''   # an unknown element in l2's <inertial>
    l2 = (f'<link name="l2"><inertial>{unknown}<mass value="{l2_mass}"/>'
          '<origin xyz="0.1 0 0"/>'
          f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
          '</inertial></link>') if l2_mass is not None else '<link name="l2"/>'
    limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>'
    j3 = ('<link name="l3"><inertial><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" '
          'iyy="0.01" iyz="0" izz="0.01"/></inertial></link><joint name="j3" type="revolute">'
          '<parent link="l2"/><child link="l3"/><origin xyz="0.2 0 0"/><axis xyz="0 0 1"/>'
          f'<mimic joint="j2"/>{limit}</joint>') if mimic else ''
    return ('<robot name="arm"><link name="base"/>'
            '<link name="l1"><inertial><mass value="2"/><inertia ixx="0.02" ixy="0" ixz="0" '
            'iyy="0.02" iyz="0" izz="0.02"/></inertial></link>'
            '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
            f'<axis xyz="0 0 1"/>{limit}</joint>{l2}'
            '<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>'
            f'<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>{limit}</joint>{j3}</robot>')


def load(source):
    """Return load_urdf(source) without showing its warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return dr.load_urdf(source)


def test_new_parameters_that_fix_a_doubtful_inertia_clear_its_warning():
    doubtful = load(arm(TRIANGLE, mimic=True))
    assert any('triangle inequality' in w for w in doubtful.warnings), doubtful.warnings
    fixed = dr.with_inertial_parameters(doubtful, dr.inertial_parameters(load(arm(mimic=True))))
    assert fixed.warnings == load(arm(mimic=True)).warnings
    assert fixed.warnings == ("joint 'j3' mimics 'j2'; it is loaded as an independent degree "
                              'of freedom',)


def test_a_good_inertia_made_doubtful_gains_the_warning_a_load_gives():
    good = load(arm(mimic=True))
    pi = dr.inertial_parameters(load(arm(TRIANGLE, mimic=True)))
    with pytest.raises(dr.InputError, match='triangle'):
        dr.with_inertial_parameters(good, pi)   # checked by default
    doubtful = dr.with_inertial_parameters(good, pi, check=False)
    expected = load(arm(TRIANGLE, mimic=True)).warnings
    assert len(expected) == 2 and doubtful.warnings == expected
    assert expected[1].startswith("link 'l2': principal moments")  # after the mimic note


def test_the_description_conditions_of_a_judged_link_stay():
    """l2's unknown <centre> element and its doubtful inertia share one message; one goes."""
    doubtful = load(arm(TRIANGLE, centre=True))
    assert len(doubtful.warnings) == 1
    assert doubtful.warnings[0].startswith("link 'l2': unknown element <centre> in <inertial> "
                                           'ignored; principal moments'), doubtful.warnings
    fixed = dr.with_inertial_parameters(doubtful, dr.inertial_parameters(load(arm())))
    assert fixed.warnings == load(arm(centre=True)).warnings
    assert fixed.warnings == ("link 'l2': unknown element <centre> in <inertial> ignored",)
    again = dr.with_inertial_parameters(fixed, dr.inertial_parameters(doubtful), check=False)
    assert again.warnings == doubtful.warnings


def test_moving_mass_is_judged_again():
    massless = load(arm(l2_mass=None))
    assert massless.warnings[0].startswith("link 'l2': joint 'j2' moves only massless links")
    pi = dr.inertial_parameters(load(arm()))
    assert dr.with_inertial_parameters(massless, pi).warnings == ()
    gone = pi.copy()
    gone[10:] = 0.0   # l2: no mass, no inertia
    assert dr.with_inertial_parameters(load(arm()), gone, check=False).warnings \
        == massless.warnings


def test_unchanged_parameters_keep_the_warnings():
    model = load(arm(TRIANGLE, centre=True, mimic=True))
    same = dr.with_inertial_parameters(model, dr.inertial_parameters(model), check=False)
    assert same.warnings == model.warnings and len(model.warnings) == 2
    np.testing.assert_allclose(same.inertia, model.inertia, rtol=1e-12, atol=1e-15)


def test_attaching_a_payload_judges_the_combined_body():
    """A payload making the link's combined body physical clears its warning; a tiny one not."""
    model = load(arm(TRIANGLE))
    assert len(model.warnings) == 1 and "'l2'" in model.warnings[0], model.warnings
    heavy = dr.attach_payload(model, 'l2', 1.0, com=(0.0, 0.0, 0.0),
                              inertia=np.diag([0.01, 0.01, 0.01]))
    # l2 with the payload, about their centre (0.05, 0, 0): diag(0.011, 0.016, 0.025), physical
    assert heavy.warnings == ()
    tiny = dr.attach_payload(model, 'l2', 1e-6, com=(0.0, 0.0, 0.0),
                             inertia=np.diag([1e-9, 1e-9, 1e-9]))
    assert tiny.warnings == model.warnings
    assert dr.detach_payload(heavy, 'l2').warnings == model.warnings
