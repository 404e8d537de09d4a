# SPDX-License-Identifier: GPL-2.0
"""cmocka's summary lines for the Python tests, as tests/run-unit.sh reads
them."""


def summary(results):
	"""Prints the summary of @results ((name, ok) pairs); the failures."""
	failed = [name for name, ok in results if not ok]
	print(f'[  PASSED  ] {len(results) - len(failed)} test(s).')
	if failed:
		print(f'[  FAILED  ] {len(failed)} test(s), listed below:')
		for name in failed:
			print(f'[  FAILED  ] {name}')
	return min(len(failed), 255)
