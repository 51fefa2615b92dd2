"""Held-out: TensorFlow's actor-critic tutorial (CartPole with a GradientTape) as written there,
with gym's CartPole replaced by a cart-pole written here in numpy: the environment's step as a
tf.numpy_function decorator, an episode run by a `for t in tf.range` loop with `break` inside
a @tf.function, collecting action probabilities, critic values and rewards in dynamically
sized TensorArrays, discounted returns accumulated backwards in another loop and
standardized with tf.math.reduce_std, the actor loss plus a summed Huber critic loss, and
Adam. Weights and the starting states come from numpy; the first episodes choose their
actions from the policy's probabilities with uniform numbers drawn by numpy, so TF and tracer
must print the same rewards and numbers; the last ones sample with the tutorial's
tf.random.categorical, where they may differ."""

import collections
import statistics
import time

import numpy as np
from engine import tf, which

layers = tf.keras.layers
seed = 42
tf.random.set_seed(seed)
rng = np.random.default_rng(seed)
eps = np.finfo(np.float32).eps.item()


class CartPole:
    """The classic cart-pole: a pole hinged on a cart that is pushed left (action 0) or right
    (action 1); a reward of 1 for each step until the pole leans past 12 degrees or the cart
    leaves [-2.4, 2.4]."""

    gravity, cart_mass, pole_mass, half_length, force, dt = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02

    def reset(self):
        self.state = rng.uniform(-0.05, 0.05, 4)
        return self.state.astype(np.float32)

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = self.force if action == 1 else -self.force
        total_mass = self.cart_mass + self.pole_mass
        pole_moment = self.pole_mass * self.half_length
        cos, sin = np.cos(theta), np.sin(theta)
        temp = (force + pole_moment * theta_dot**2 * sin) / total_mass
        theta_acc = (self.gravity * sin - cos * temp) / (
            self.half_length * (4.0 / 3.0 - self.pole_mass * cos**2 / total_mass)
        )
        x_acc = temp - pole_moment * theta_acc * cos / total_mass
        x, x_dot = x + self.dt * x_dot, x_dot + self.dt * x_acc
        theta, theta_dot = theta + self.dt * theta_dot, theta_dot + self.dt * theta_acc
        self.state = np.array([x, x_dot, theta, theta_dot])
        done = abs(x) > 2.4 or abs(theta) > 12 * 2 * np.pi / 360
        return self.state, 1.0, done, False, {}


env = CartPole()


class ActorCritic(tf.keras.Model):
    """Combined actor-critic network."""

    def __init__(self, num_actions, num_hidden_units):
        """Initialize."""
        super().__init__()

        self.common = layers.Dense(num_hidden_units, activation="relu")
        self.actor = layers.Dense(num_actions)
        self.critic = layers.Dense(1)

    def call(self, inputs):
        x = self.common(inputs)
        return self.actor(x), self.critic(x)


num_actions = 2
num_hidden_units = 64

model = ActorCritic(num_actions, num_hidden_units)
model(np.zeros((1, 4), np.float32))
model.set_weights(
    [
        rng.normal(0.0, 0.5 / np.sqrt(w.shape[0]), w.shape).astype(np.float32)
        for w in model.get_weights()
    ]
)


@tf.numpy_function(Tout=[tf.float32, tf.int32, tf.int32])
def env_step(action):
    """Returns state, reward and done flag given an action."""

    state, reward, done, truncated, info = env.step(action)
    return (state.astype(np.float32), np.array(reward, np.int32), np.array(done, np.int32))


def run_episode(initial_state, model, max_steps, uniforms=None):
    """Runs a single episode to collect training data. With `uniforms`, step t takes the
    first action whose cumulative probability passes uniforms[t]."""

    action_probs = tf.TensorArray(dtype=tf.float32, size=0, dynamic_size=True)
    values = tf.TensorArray(dtype=tf.float32, size=0, dynamic_size=True)
    rewards = tf.TensorArray(dtype=tf.int32, size=0, dynamic_size=True)

    initial_state_shape = initial_state.shape
    state = initial_state

    for t in tf.range(max_steps):
        # Convert state into a batched tensor (batch size = 1)
        state = tf.expand_dims(state, 0)

        # Run the model and to get action probabilities and critic value
        action_logits_t, value = model(state)

        # Sample next action from the action probability distribution
        action_probs_t = tf.nn.softmax(action_logits_t)
        if uniforms is None:
            action = tf.random.categorical(action_logits_t, 1)[0, 0]
        else:
            passed = tf.math.cumsum(action_probs_t[0]) > uniforms[t]
            action = tf.argmax(tf.cast(passed, tf.int32))

        # Store critic values
        values = values.write(t, tf.squeeze(value))

        # Store log probability of the action chosen
        action_probs = action_probs.write(t, action_probs_t[0, action])

        # Apply action to the environment to get next state and reward
        state, reward, done = env_step(action)
        state.set_shape(initial_state_shape)

        # Store reward
        rewards = rewards.write(t, reward)

        if tf.cast(done, tf.bool):
            break

    action_probs = action_probs.stack()
    values = values.stack()
    rewards = rewards.stack()

    return action_probs, values, rewards


def get_expected_return(rewards, gamma, standardize=True):
    """Compute expected returns per timestep."""

    n = tf.shape(rewards)[0]
    returns = tf.TensorArray(dtype=tf.float32, size=n)

    # Start from the end of `rewards` and accumulate reward sums
    # into the `returns` array
    rewards = tf.cast(rewards[::-1], dtype=tf.float32)
    discounted_sum = tf.constant(0.0)
    discounted_sum_shape = discounted_sum.shape
    for i in tf.range(n):
        reward = rewards[i]
        discounted_sum = reward + gamma * discounted_sum
        discounted_sum.set_shape(discounted_sum_shape)
        returns = returns.write(i, discounted_sum)
    returns = returns.stack()[::-1]

    if standardize:
        returns = (returns - tf.math.reduce_mean(returns)) / (tf.math.reduce_std(returns) + eps)

    return returns


huber_loss = tf.keras.losses.Huber(reduction=tf.keras.losses.Reduction.SUM)


def compute_loss(action_probs, values, returns):
    """Computes the combined Actor-Critic loss."""

    advantage = returns - values

    action_log_probs = tf.math.log(action_probs)
    actor_loss = -tf.math.reduce_sum(action_log_probs * advantage)

    critic_loss = huber_loss(values, returns)

    return actor_loss + critic_loss


optimizer = tf.keras.optimizers.Adam(learning_rate=0.01)


@tf.function
def train_step(initial_state, model, optimizer, gamma, max_steps_per_episode, uniforms=None):
    """Runs a model training step."""

    with tf.GradientTape() as tape:
        # Run the model for one episode to collect training data
        action_probs, values, rewards = run_episode(
            initial_state, model, max_steps_per_episode, uniforms
        )

        # Calculate the expected returns
        returns = get_expected_return(rewards, gamma)

        # Convert training data to appropriate TF tensor shapes
        action_probs, values, returns = [
            tf.expand_dims(x, 1) for x in [action_probs, values, returns]
        ]

        # Calculate the loss values to update our network
        loss = compute_loss(action_probs, values, returns)

    # Compute the gradients from the loss
    grads = tape.gradient(loss, model.trainable_variables)

    # Apply the gradients to the model's parameters
    optimizer.apply_gradients(zip(grads, model.trainable_variables))

    episode_reward = tf.math.reduce_sum(rewards)

    return episode_reward, loss


max_steps_per_episode = 200
gamma = 0.99
episodes_reward = collections.deque(maxlen=10)
probe = rng.uniform(-0.1, 0.1, (3, 4)).astype(np.float32)

print(which, "-- actions chosen with numpy's uniform numbers")
steps, start = 0, time.perf_counter()
for i in range(30):
    initial_state = tf.constant(env.reset(), dtype=tf.float32)
    uniforms = tf.constant(rng.random(max_steps_per_episode).astype(np.float32))
    episode_reward, loss = train_step(
        initial_state, model, optimizer, gamma, max_steps_per_episode, uniforms
    )
    episode_reward = int(episode_reward)
    steps += episode_reward
    episodes_reward.append(episode_reward)
    running_reward = statistics.mean(episodes_reward)
    if i % 3 == 0:
        print(
            which,
            f"Episode {i}: reward {episode_reward}, loss {float(loss):.4f}, "
            f"running reward {running_reward:.2f}",
        )
elapsed = time.perf_counter() - start
logits, value = model(probe)
print(
    which,
    "policy on probe states",
    " ".join(f"{p:.5f}" for p in tf.nn.softmax(logits).numpy()[:, 0]),
)
print(which, "critic on probe states", " ".join(f"{v:.4f}" for v in value.numpy()[:, 0]))
print(which, "optimizer iterations", int(optimizer.iterations.numpy()))

print(which, "-- actions sampled with tf.random.categorical (numbers may differ from here)")
for i in range(10):
    initial_state = tf.constant(env.reset(), dtype=tf.float32)
    episode_reward, loss = train_step(initial_state, model, optimizer, gamma, max_steps_per_episode)
    episodes_reward.append(int(episode_reward))
print(
    which,
    "episode rewards are whole numbers in [1, 200]:",
    all(1 <= r <= 200 for r in episodes_reward),
)
print(
    which,
    f"30 episodes, {steps} steps in {elapsed:.2f} s: {elapsed / 30 * 1e3:.1f} ms an episode, "
    f"{elapsed / steps * 1e3:.3f} ms a step",
)
