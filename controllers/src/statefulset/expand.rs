//! One step of a StatefulSet plan performed as single calls: the step's
//! shared actions at once, each of its own [`Write`]s as a [`Lane`] of
//! calls sent one after the other (the lanes side by side, as upstream's
//! burst runs its pods' writes in parallel), and the events their answers
//! record handed out with the next calls. Once every lane has ended, the
//! plan's step has its answers, in its order.

use super::call::{Call, Lane};
use super::write::Write;
use crate::plan::{Action, Event, Step};
use crate::protocol::{Answer, Told};

/// A plan step being performed.
#[derive(Debug)]
pub(super) struct Expansion {
    /// The plan step's answers as they come, one per action.
    answers: Vec<Option<Told>>,
    /// The lanes, each with the index of its write in the plan step.
    lanes: Vec<(usize, Lane)>,
    /// The calls handed out last (empty once the plan step is done).
    step: Step<Call>,
    /// Where the answer to each action of `step` goes.
    routes: Vec<Route>,
    /// Events recorded by answers, handed out with the next calls.
    events: Vec<Event>,
}

/// Where an answer goes.
#[derive(Debug)]
enum Route {
    /// The plan step's shared action at this index.
    Shared(usize),
    /// The lane at this index of [`Expansion::lanes`].
    Lane(usize),
    /// An event: nothing waits for it.
    Event,
}

impl Expansion {
    /// Nothing being performed.
    pub(super) fn idle() -> Self {
        Self::new(&Step { actions: Vec::new() })
    }

    /// Starts performing `step`.
    pub(super) fn new(step: &Step<Write>) -> Self {
        let mut expansion = Self {
            answers: vec![None; step.actions.len()],
            lanes: Vec::new(),
            step: Step { actions: Vec::new() },
            routes: Vec::new(),
            events: Vec::new(),
        };
        for (i, action) in step.actions.iter().enumerate() {
            match action.clone().into_shared() {
                Ok(shared) => {
                    expansion.step.actions.push(shared);
                    expansion.routes.push(Route::Shared(i));
                }
                Err(write) => expansion.lanes.push((i, Lane::new(write))),
            }
        }
        expansion.hand_out();
        expansion
    }

    /// The calls to perform now; `None` once the plan step is done (or
    /// before it started).
    pub(super) fn step(&self) -> Option<&Step<Call>> {
        (!self.step.actions.is_empty()).then_some(&self.step)
    }

    /// Tells the answers to [`Expansion::step`]'s actions, in its order;
    /// the plan step's answers once every lane has ended.
    pub(super) fn told(&mut self, answers: Vec<Told>) -> Option<Vec<Told>> {
        for (route, answer) in std::mem::take(&mut self.routes).into_iter().zip(answers) {
            match route {
                Route::Shared(i) => self.answers[i] = Some(answer),
                Route::Lane(j) => {
                    let events = self.lanes[j].1.told(answer);
                    self.events.extend(events);
                }
                Route::Event => {}
            }
        }
        self.step.actions.clear();
        self.hand_out();
        if self.step().is_some() {
            return None;
        }
        for (i, lane) in &self.lanes {
            self.answers[*i] = lane.ended().cloned();
        }
        Some(std::mem::take(&mut self.answers).into_iter().map(|a| a.unwrap_or(Ok(Answer::Done))).collect())
    }

    /// Adds the pending events and each running lane's next call to the
    /// step handed out.
    fn hand_out(&mut self) {
        for event in self.events.drain(..) {
            self.step.actions.push(Action::Event(event));
            self.routes.push(Route::Event);
        }
        for (j, (_, lane)) in self.lanes.iter().enumerate() {
            if let Some(call) = lane.next() {
                self.step.actions.push(Action::Own(call.clone()));
                self.routes.push(Route::Lane(j));
            }
        }
    }
}
