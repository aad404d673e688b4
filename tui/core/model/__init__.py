"""The shared data of the core: records, their columns, the pydantic boundary form, and the
one sanitiser for text from outside."""
