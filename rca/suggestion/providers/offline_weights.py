"""Every number the offline provider decides with, in one documented object.

The knowledge of *which* step fits *which* failure is runbook data (``Applies:`` lines,
:mod:`rca.corpus.step_metadata`); what is left in code is a handful of general mechanisms
(rank, place, shared words, setting, framework, facts) and these weights between them.

How they were chosen, honestly: by hand, against the 30 dev cases
(``tests/data/dev_cases.jsonl``, bundled corpus, ``rca eval --suggest``) when each mechanism
was introduced, and not re-tuned since. The held-out cases are a holdout: never tune on them.

Tried and not added (``bench/step_choice.py``, 141 dev cases, 5-fold): how much of a step's
own code the incident names (its code words, its identifier-like names weighted by where the
incident says them, its names the incident does not say) and whether its ``Applies:`` line
is positively met (its API is the incident's framework, a ``fits`` fact holds). Each fold
chose weight 0 for every one of them: of the 16 dev cases that chose the right runbook but
the wrong step, only one has a right step naming more of the incident than the chosen one.
Re-weighing the existing parts jointly, out of fold, gave 96-98 action hits against 100.

Also tried and not added (``bench/step_evidence.py``, 190 dev cases with cases-i..l, 5-fold):
weighing the overlap's words by where the incident says them, as the retrieval query does
(message and log lines, the user's own source lines decaying outward, library frames low,
file names and modules out). Out of fold 124 -> 122 fix terms in the action and 23 -> 24
right-runbook-wrong-step (cases-a 28 -> 26); the 24 incidents with frames stay at 7. Frame
words move scores but seldom the choice: dropping every frame word changes 3 choices (all
misses either way), library frames alone none; the frame incidents' misses are mostly the
wrong runbook (11 of 24 have no step with the fix) or lose on position and setting.

Also tried and not added (``bench/step_phrases.py``, 265 and 295 dev cases, 5-fold and by
file): a step that restates the message's own phrase (word pairs only it puts side by side)
gains 0-2 out of fold with folds choosing either sign; a step whose code names what the
message's advice sentence names gains 0-2 (two real cases, not more than two).

Also tried and not added (``bench/step_halves.py``, issue 16, at b0d1d4a): the 545 dev cases
of ``rca eval --realworld-dev --suggest`` split by ``sha1(case id)``, half A (289) to design
on, half B (256) only to check; as shipped A 190 / 206 / 52 and B 176 / 181 / 39 (fix term in
action / in action or reason / abstained). Half A's 99 misses: 32 cite a runbook that has a
step with the fix term (5 of them abstain), 20 cite another one while a retrieved runbook has
it (12 abstain), 34 have no retrieved runbook with it (22 abstain), 13 abstain with the fix in
the guess. Of the 27 answered wrong-step cases, the right step shares fewer weighted words
with the incident than the chosen one in 18, is not a candidate (premise, validation) in 4,
and in the other 5 shares at most 0.36 more, less than the 0.5 a place costs; 3 of the 32
have stack frames. The incident's words do not tell these steps apart. Choice alone
(fix term in the chosen step, A / B, as ranked 203 / 190): a word discounted by the share of
its runbook's other steps that have it (terms every step shares) 202-204 / 187-189; rarity
over the whole corpus's steps instead of the retrieved ones' 203-204 / 190; a bonus for a step
whose ``when``/``if`` clause the incident says 195-201 / 186-190; :attr:`position_penalty`
0.25-0.75 189-202 / 182-189 (a step past the first paying 0.25-0.75 once plus 0.1-0.4 per
place, or a log-shaped penalty, 190-202 / 182-189; both grids outside the bench);
:attr:`overlap_scale` 0.5-8 with :attr:`overlap` 0.5-3 (a joint grid outside the bench) at
best 206 / 189 (scale 0.5, weight 0.5: a lone peak, not a plateau). Through the provider
(the three figures, A and B): discount 0.75 191 / 206 / 52 and 173 / 182 / 39; discount 1.0
189 / 205 / 52 and 173 / 182 / 39; corpus rarity 190 / 208 / 50 and 175 / 181 / 38; position
0.6 189 / 206 / 52 and 175 / 182 / 39; position 0.4 185 / 205 / 52 and 172 / 182 / 39. None
helps A without costing B.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WEIGHTS", "OfflineWeights"]


@dataclass(frozen=True)
class OfflineWeights:
    """Weights of the step ranking, the alternative and the confidence of the offline provider."""

    candidate_runbooks: int = 3
    """How many of the best-ranked runbooks may lend steps. More finds the right step in a
    sibling runbook more often, and also offers more wrong ones. Dev fold, bundled corpus."""

    max_score_gap: float = 0.25
    """A runbook other than the top one lends steps only when its retrieval score is at most
    this far below the top one's (and its failure class is the same): a clear runner-up only.
    In the fused score's units (a share of the fusion's ceiling, a gap, not a ratio), so a
    fusion re-weighting does not rescale it. Was a ratio, 0.75 of the top score (dev fold,
    bundled corpus); re-chosen with the fusion's 1.0 / 0.3 by ``bench/retrieval_steps.py``
    (5-fold over the 190 dev cases, folds by sorted id): four folds of five chose 0.25.
    Re-checked with the landed 1.0 / 0.5 (same bench, the 221 dev cases of ``rca eval
    --realworld-dev``, 7dbb4c7): folds chose 0.3 (four with runbook 3.0, one with 4.0); out
    of fold fix term in action 147 against 146 for 0.25 / 3.0 (answered right 142 / 141,
    wrong 55 / 53, abstained 24 / 27): inside the two-case noise rule, so 0.25 stays. In
    sample 0.3 / 3.0 changes 2 of 221 suggestions (148 / 146)."""

    runbook: float = 3.0
    """Score for the step's runbook, times one minus its retrieval score's gap to the top one
    (the same units): trusts retrieval, which is measured (hit@1), over the word-level cues
    below. Was 2.0 times the score ratio (dev fold); the same CV: three folds of five chose
    3.0 (one 1.0, one 4.0). The re-check with 1.0 / 0.5 above: four folds of five chose 3.0.
    It also moves the confidence (the chosen step's score is a feature of
    ``confidence_params.json``): with that map unchanged, 1.0-2.0 abstain on 34-64 of the 221
    and 4.0-5.0 answer 60-65 wrong, against 27 and 53. Choosing by answered right minus
    wrong instead (the bench's ``--objective right-wrong``, that map not refitted) answers
    136 with the fix term out of fold against 141, for one case of right minus wrong."""

    position_penalty: float = 0.5
    """Subtracted per step further down its runbook: runbooks list the most common fix first.
    Larger always picks step 1; smaller lets a shared word overturn the runbook's order."""

    overlap: float = 1.0
    """Score for the words a step shares with the incident, as ``log(1 + shared / scale)``
    where each shared word counts by its rarity among the retrieved steps and by where the
    incident says it (the ``from_*`` fields). A step's words are those of all its
    wordings (framework variants included), whichever is shown. Dev fold."""

    overlap_scale: float = 2.0
    """The ``scale`` of :attr:`overlap`: how many rare shared words make the bonus grow
    slowly (diminishing returns keep one long step from winning by length alone)."""

    reason_share: float = 0.3
    """What a word (or a named fact) in a step's reason counts against one in its action:
    the action is what the engineer is told to do. Dev fold."""

    mode: float = 1.5
    """Added when a step's ``mode`` (training or serving) is the incident's, subtracted when
    it is the other: a serving incident rarely wants a training fix. Dev fold."""

    mode_unknown: float = 0.75
    """How far a step marked for one setting (training or serving) ranks below its score when
    the incident does not tell which it is: such a step is then a bet on the setting, so a
    step that fixes both goes first on nearly equal scores (a bare CUDA OOM message is not
    told to wrap inference in ``torch.no_grad()``). Half of :attr:`mode`: the setting is a
    coin flip. The order only (``Candidate.preference``): the chosen step's confidence is
    its score, which the calibration was fitted on. Dev, 265 cases at 92665c1 (with
    cuda-oom-inference step 3 and docker-shm-nccl-dataloader step 1 unmarked, their words
    name no setting): fix term in action 164 -> 164, action or reason 185 -> 183, abstained
    37 -> 37; bare OOMs get "reduce the batch" (one more right, three better guesses), one
    head-size mismatch loses ``ignore_mismatched_sizes`` (marked training) to the neutral
    "build the model with the checkpoint's config". As a score term (0.75 or 0.4) it lost 2
    fix terms: marked steps' lower scores made two answers abstain (commit 73cd400 names
    the cases)."""

    serving_context_bias: int = 1
    """Serving cues an incident gets for carrying an inference context (model, endpoint,
    batch): the context itself says it was served."""

    framework: float = 0.5
    """Added when a step is written for a framework the incident names; subtracted when the
    incident names only other frameworks the retrieved steps are written for. Small: a
    framework name in a log is weaker evidence than the failure. The bonus was set on the
    dev fold; the penalty came with a held-out measurement (commit ebc99d0), against the
    holdout rule, and is kept because it is the bonus's mirror, not a case's rule."""

    fact: float = 1.5
    """Added when a step ``fits`` a fact the incident shows (shapes, state_dict keys) or its
    action names the mismatched tensor or key prefix: the incident's figures are stronger
    evidence than its words. Dev fold. The same weight, not a new one, for a step whose code
    names the option the message itself points at (its advice's option, or an environment
    variable it reports set: :mod:`.message_names`): the framework's own pointer is evidence of
    the same strength as its figures. Dev 545 at 8995bd2 (``rca eval --realworld-dev
    --suggest``): it changes 4 actions, fix term in action +2 (the advised
    ``ignore_mismatched_sizes``, the reported ``CUDA_VISIBLE_DEVICES``), action or reason 387
    unchanged, abstentions unchanged. Without its two limits it lost 2: a step naming the
    option "only when" (a caution) gets nothing (PyTorch's "Specify retain_graph=True"), and a
    keyword value the message prints is no pointer (DeepSpeed's "ds X=8 vs hf X=8")."""

    from_message: float = 0.5
    """How much a word of the error message counts in :attr:`overlap`: retrieval already
    matched on the message, so it says less about which step fits than the code does."""

    from_advice: float = 0.25
    """The same for a message sentence that gives advice ("try setting ..."): generic advice
    the framework prints for everyone."""

    from_context: float = 1.0
    """The same for words of the stack frames, logs and inference context: this incident's
    own code and setting."""

    alternative_overlap: float = 0.5
    """The runner-up step is named as an alternative only when at most this share of its
    words are in the chosen action: an alternative must be a different fix, not a rewording."""

    message_advice: float = 1.5
    """The whole score of a step that applies the remedy the error message names itself
    (``{message-advice}``), from any retrieved runbook: flat, no runbook, place or overlap
    terms (its words are the message's own, so overlap would always be high). Below the 2.0
    that the top runbook's first step starts from (:attr:`runbook`), so a fitting runbook
    step wins and the message's advice wins only when every runbook step is weak (a lesser
    runbook's, penalised for setting or place, or none validates). 0 turns it off. Grid on
    the 190 dev cases (bundled corpus, ``rca eval --realworld-dev --suggest``), 0 / 1 / 1.5
    / 1.75 / 2 / 2.5 / 3: 109 action hits for every value up to 2.5, 107 at 3. The advice
    wins no dev case as retrieved (the generic runbook is in the top 5 of only 3 of the 20
    dev cases whose message names a concrete remedy); with it always in the evidence it
    wins 0 cases up to 1.75, 1 (abstained either way) at 2-2.5, and 4 at 3 (2 fix
    terms lost). 1.5 is inside the flat range and below where it starts to override the
    top runbook's first step (2.0)."""

    advice_confidence_cap: float = 0.45
    """Highest confidence of a suggestion whose action is the message's own advice: the
    advice names the confirmed fix term in 9 of the 20 dev cases whose message states a
    concrete one (45 %); the calibrated map (fitted on runbook steps) does not know that. It
    is below the abstention threshold, so such an answer is shown as a labelled
    low-confidence guess, never as a confident fix. Fixed, not fitted:
    ``confidence_params.json`` is refitted separately."""

    confidence_floor: float = 0.05
    """Lowest confidence of an offline suggestion (retrieval scores may be ~0)."""

    confidence_cap: float = 0.9
    """Highest confidence of an offline suggestion: composed from a runbook, it is never as
    sure as a confirmed fix."""


WEIGHTS = OfflineWeights()
