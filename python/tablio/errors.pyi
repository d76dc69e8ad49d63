from typing import Optional

class FormatError(ValueError):
    path: Optional[str]
    offset: Optional[int]
    key: Optional[str]
    def __init__(self, message: str, path: Optional[str] = ..., offset: Optional[int] = ...,
                 key: Optional[str] = ...) -> None: ...

class DataLossError(FormatError): ...
class UsageError(ValueError): ...
