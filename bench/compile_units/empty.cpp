// Nothing: what every other unit is measured over.
int main() { return 0; }
