"""One result document read: its rows' figures and the machine and software it ran on.

rows        the figures of a result document's rows: samples, failures, repetitions
machines    what machine and software a run ran on: identity, facts, labels, the machine
            file's match
"""
