"""Ops that hold graphs: `call` (a whole traced function as one op). Their gradient rules
build gradients of the graphs they hold, so they sit above the gradient pass."""
