import os
from typing import Mapping, Optional, Union

import numpy as np

def read(path: str, allow_network: bool = ..., allow_pipes: bool = ...,
         confine: Optional[Union[str, "os.PathLike[str]"]] = ..., limits: Optional[Mapping[str, float]] = ...) -> np.ndarray: ...
def write(path: str, array: np.ndarray, allow_network: bool = ..., allow_pipes: bool = ...,
          confine: Optional[Union[str, "os.PathLike[str]"]] = ...) -> None: ...
