"""Reference for the harness's test_tiny model: validates the parity machinery itself."""
import torch
from torch import nn

from parity_common import main


class TinyMlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def build(model_id):
    assert model_id == "test_tiny", model_id
    model = TinyMlp()
    inputs = {"x": torch.randn(8, 64), "target": torch.randint(0, 10, (8,))}
    return {
        "module": model,
        "inputs": inputs,
        "forward": lambda m, i: m(i["x"]),
        "loss": lambda m, i: nn.functional.cross_entropy(m(i["x"]), i["target"]),
        "optimizer": lambda m: torch.optim.SGD(m.parameters(), lr=0.01),
    }


if __name__ == "__main__":
    main(build)
